package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/parley/parley"
)

// TestAdminLeadCapture: a segment's lead capture is one set of fields that
// serves both ways of collecting them: the widget's form (formConfig) and
// the assistant asking in the conversation (a SUBMIT_FORM tool of the
// segment, kept in step with the fields in the same save).
func TestAdminLeadCapture(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t, nil)
	ten := b.ownedTenant(t, "builder")
	bg := context.Background()
	c := b.newAdminClient(t)
	c.signIn(ten)

	leadTool := func(t *testing.T, slug string) (parley.Segment, *parley.Tool) {
		t.Helper()
		s, err := b.db.Segment(bg, ten.ID, slug)
		mustStep(t, "reading the segment", err)
		if s.LeadToolID == nil {
			return s, nil
		}
		tl, err := b.db.Tool(bg, ten.ID, *s.LeadToolID)
		mustStep(t, "reading the lead tool", err)
		return s, &tl
	}
	fieldNames := func(raw json.RawMessage) []string {
		var cfg parley.SubmitFormConfig
		if err := json.Unmarshal(raw, &cfg); err != nil {
			t.Fatalf("tool config %s: %v", raw, err)
		}
		var names []string
		for _, f := range cfg.Fields {
			names = append(names, f.Name)
		}
		return names
	}

	c.get("/admin/segments/new")
	p := c.submit("/admin/segments", url.Values{
		"name": {"Quotes"}, "systemPrompt": {"Quote things."}, "isActive": {"true"}, "askInChat": {"true"},
		"formIntent": {"request a quote"}, "formConfirmation": {"We will be in touch."},
		"fields.0.label": {"Full name"}, "fields.0.type": {"text"}, "fields.0.required": {"true"},
		"fields.1.label": {"Email"}, "fields.1.type": {"email"}, "fields.1.required": {"true"},
	})
	if p.status != http.StatusSeeOther {
		t.Fatalf("creating with lead capture in the conversation: %d %s", p.status, p.text(".field-error"))
	}
	seg, tl := leadTool(t, "quotes")
	if tl == nil {
		t.Fatal("no lead tool after saving the segment with the assistant asking")
	}
	if tl.Type != "SUBMIT_FORM" || !tl.IsActive || tl.SegmentID == nil || *tl.SegmentID != seg.ID || tl.Name != "Lead capture: Quotes" ||
		!strings.Contains(tl.Description, "request a quote") || !slices.Equal(fieldNames(tl.Config), []string{"full_name", "email"}) {
		t.Errorf("lead tool %+v (config %s)", tl, tl.Config)
	}
	// The agent offers it: its stored config passes the tool's own rules.
	if _, problems := parley.ValidateToolConfig(tl.Type, tl.Config); len(problems) > 0 {
		t.Errorf("the lead tool's config does not validate: %v", problems)
	}
	if seg.FormConfig == nil || seg.FormConfig.Enabled {
		t.Errorf("form config %+v: the widget's form was not asked for", seg.FormConfig)
	}

	t.Run("PageShowsBothWays", func(t *testing.T) {
		p := c.as(t).get("/admin/segments/" + seg.ID)
		if _, on := p.doc.Find("#askInChat").Attr("checked"); !on {
			t.Error("the conversation box is not ticked for a segment whose lead tool is active")
		}
		if _, on := p.doc.Find("#formEnabled").Attr("checked"); on {
			t.Error("the widget form box is ticked")
		}
		tools := c.as(t).get("/admin/tools")
		if a := tools.doc.Find("#tool-" + tl.ID + " .lead-of a"); a.AttrOr("href", "") != "/admin/segments/"+seg.ID+"#form-builder" {
			t.Errorf("tools list: lead-of link %q", a.AttrOr("href", ""))
		}
		edit := c.as(t).get("/admin/tools/" + tl.ID)
		if a := edit.doc.Find("#lead-of a"); a.AttrOr("href", "") != "/admin/segments/"+seg.ID+"#form-builder" || a.Text() != "Quotes" {
			t.Errorf("tool page: lead-of %q %q", a.AttrOr("href", ""), a.Text())
		}
	})

	t.Run("FieldsFollowAndBothWays", func(t *testing.T) {
		c := c.as(t)
		form := formValues(c.get("/admin/segments/" + seg.ID).doc.Find("#segment-form"))
		form.Set("fields.2.label", "Phone")
		form.Set("fields.2.type", "phone")
		form.Set("formEnabled", "true")
		form.Set("name", "Quotes & co")
		if p := c.do("POST", "/admin/segments/"+seg.ID, form, nil); p.status != http.StatusSeeOther {
			t.Fatalf("saving: %d %s", p.status, p.text(".field-error"))
		}
		s, tl2 := leadTool(t, "quotes")
		if tl2 == nil || tl2.ID != tl.ID || !slices.Equal(fieldNames(tl2.Config), []string{"full_name", "email", "phone"}) ||
			tl2.Name != "Lead capture: Quotes & co" || !tl2.IsActive {
			t.Errorf("lead tool after adding a field: %+v", tl2)
		}
		if s.FormConfig == nil || !s.FormConfig.Enabled || len(s.FormConfig.Fields) != 3 {
			t.Errorf("form config %+v", s.FormConfig)
		}
	})

	t.Run("TurnedOffKeepsTheToolInactive", func(t *testing.T) {
		c := c.as(t)
		form := formValues(c.get("/admin/segments/" + seg.ID).doc.Find("#segment-form"))
		form.Del("askInChat")
		if p := c.do("POST", "/admin/segments/"+seg.ID, form, nil); p.status != http.StatusSeeOther {
			t.Fatalf("saving: %d %s", p.status, p.text(".field-error"))
		}
		if _, tl2 := leadTool(t, "quotes"); tl2 == nil || tl2.IsActive {
			t.Errorf("lead tool after turning the conversation way off: %+v, want kept, inactive", tl2)
		}
		if _, on := c.get("/admin/segments/" + seg.ID).doc.Find("#askInChat").Attr("checked"); on {
			t.Error("the conversation box is still ticked")
		}
	})

	t.Run("AskingNeedsAField", func(t *testing.T) {
		c := c.as(t)
		c.get("/admin/segments/new")
		p := c.submit("/admin/segments", url.Values{"name": {"Empty"}, "systemPrompt": {"x"}, "isActive": {"true"}, "askInChat": {"true"}})
		if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.text("#err-formConfig"), "at least one field") {
			t.Errorf("asking without fields: %d %q", p.status, p.text("#err-formConfig"))
		}
		if _, err := b.db.Segment(bg, ten.ID, "empty"); parley.ErrorKind(err) != parley.KindNotFound {
			t.Errorf("the segment was stored without its lead tool: %v", err)
		}
	})

	t.Run("RowsInError", func(t *testing.T) {
		c := c.as(t)
		c.get("/admin/segments/new")
		p := c.submit("/admin/segments", url.Values{
			"name": {"Rows"}, "systemPrompt": {"x"}, "isActive": {"true"},
			"starters.0.text": {"Fine"}, "starters.1.text": {strings.Repeat("s", 51)},
			"fields.0.label": {"Email"}, "fields.0.type": {"email"}, "fields.1.name": {"email"}, "fields.1.label": {"Email again"}, "fields.1.type": {"email"},
		})
		if p.status != http.StatusUnprocessableEntity {
			t.Fatalf("status %d, want 422", p.status)
		}
		var starters, fields []string
		p.doc.Find("#starters tbody tr").Each(func(i int, s *goquery.Selection) {
			if s.HasClass("row-error") {
				starters = append(starters, s.Find("input[aria-invalid=true]").AttrOr("name", "?"))
			}
		})
		p.doc.Find("#form-fields tbody tr").Each(func(i int, s *goquery.Selection) {
			if s.HasClass("row-error") {
				fields = append(fields, s.Find("[aria-invalid=true]").AttrOr("name", "?"))
			}
		})
		if !slices.Equal(starters, []string{"starters.1.text"}) || !slices.Equal(fields, []string{"fields.1.name"}) {
			t.Errorf("rows in error: starters %v, fields %v; want the second starter's text and the second field's name", starters, fields)
		}
	})

	t.Run("DeletedWithItsSegment", func(t *testing.T) {
		c := c.as(t)
		c.get("/admin/segments")
		if p := c.submit("/admin/segments/"+seg.ID+"/delete", nil); p.status != http.StatusSeeOther {
			t.Fatalf("deleting a segment whose only tool is its lead tool: %d %s", p.status, p.text(".delete-error"))
		}
		if _, err := b.db.Tool(bg, ten.ID, tl.ID); parley.ErrorKind(err) != parley.KindNotFound {
			t.Errorf("the lead tool outlived its segment: %v", err)
		}
	})
}
