package admin_test

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
	"github.com/parley/parley/web/webtest"
)

// TestAdminLeadCapture: a segment's lead capture is one set of fields that
// serves both ways of collecting them: the widget's form (formConfig) and
// the assistant asking in the conversation (a SUBMIT_FORM tool of the
// segment, kept in step with the fields in the same save).
func TestAdminLeadCapture(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	ten := b.OwnedTenant(t, "builder")
	bg := context.Background()
	c := b.NewAdminClient(t)
	c.SignIn(ten)

	leadTool := func(t *testing.T, slug string) (parley.Segment, *parley.Tool) {
		t.Helper()
		s, err := b.DB.Segment(bg, ten.ID, slug)
		webtest.MustStep(t, "reading the segment", err)
		if s.LeadToolID == nil {
			return s, nil
		}
		tl, err := b.DB.Tool(bg, ten.ID, *s.LeadToolID)
		webtest.MustStep(t, "reading the lead tool", err)
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

	c.Get("/admin/segments/new")
	p := c.Submit("/admin/segments", url.Values{
		"name": {"Quotes"}, "systemPrompt": {"Quote things."}, "isActive": {"true"}, "askInChat": {"true"},
		"formIntent": {"request a quote"}, "formConfirmation": {"We will be in touch."},
		"fields.0.label": {"Full name"}, "fields.0.type": {"text"}, "fields.0.required": {"true"},
		"fields.1.label": {"Email"}, "fields.1.type": {"email"}, "fields.1.required": {"true"},
	})
	if p.Status != http.StatusSeeOther {
		t.Fatalf("creating with lead capture in the conversation: %d %s", p.Status, p.Text(".field-error"))
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
		p := c.As(t).Get("/admin/segments/" + seg.ID)
		if _, on := p.Doc.Find("#askInChat").Attr("checked"); !on {
			t.Error("the conversation box is not ticked for a segment whose lead tool is active")
		}
		if _, on := p.Doc.Find("#formEnabled").Attr("checked"); on {
			t.Error("the widget form box is ticked")
		}
		tools := c.As(t).Get("/admin/tools")
		if a := tools.Doc.Find("#tool-" + tl.ID + " .lead-of a"); a.AttrOr("href", "") != "/admin/segments/"+seg.ID+"#form-builder" {
			t.Errorf("tools list: lead-of link %q", a.AttrOr("href", ""))
		}
		edit := c.As(t).Get("/admin/tools/" + tl.ID)
		if a := edit.Doc.Find("#lead-of a"); a.AttrOr("href", "") != "/admin/segments/"+seg.ID+"#form-builder" || a.Text() != "Quotes" {
			t.Errorf("tool page: lead-of %q %q", a.AttrOr("href", ""), a.Text())
		}
	})

	t.Run("FieldsFollowAndBothWays", func(t *testing.T) {
		c := c.As(t)
		form := webtest.FormValues(c.Get("/admin/segments/" + seg.ID).Doc.Find("#segment-form"))
		form.Set("fields.2.label", "Phone")
		form.Set("fields.2.type", "phone")
		form.Set("formEnabled", "true")
		form.Set("name", "Quotes & co")
		if p := c.Do("POST", "/admin/segments/"+seg.ID, form, nil); p.Status != http.StatusSeeOther {
			t.Fatalf("saving: %d %s", p.Status, p.Text(".field-error"))
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

	t.Run("WhenTheFormShows", func(t *testing.T) {
		c := c.As(t)
		page := c.Get("/admin/segments/" + seg.ID)
		if got := page.Doc.Find("#formDisplay option[selected]").AttrOr("value", ""); got != parley.FormAfterFirstAnswer {
			t.Errorf("the form shows %q by default, want after the first answer", got)
		}
		if got := page.Text(`label[for="formDisplay"]`); got != "When the widget shows the form" {
			t.Errorf("the setting's label = %q", got)
		}
		form := webtest.FormValues(page.Doc.Find("#segment-form"))
		form.Set("formDisplay", parley.FormWhenAsked)
		if p := c.Do("POST", "/admin/segments/"+seg.ID, form, nil); p.Status != http.StatusSeeOther {
			t.Fatalf("saving: %d %s", p.Status, p.Text(".field-error"))
		}
		if s, _ := leadTool(t, "quotes"); s.FormConfig == nil || s.FormConfig.Display != parley.FormWhenAsked {
			t.Errorf("form config %+v, want shown when asked", s.FormConfig)
		}
		if got := c.Get("/admin/segments/"+seg.ID).Doc.Find("#formDisplay option[selected]").AttrOr("value", ""); got != parley.FormWhenAsked {
			t.Errorf("the page shows %q once saved", got)
		}
		form.Set("formDisplay", "sometimes")
		if p := c.Do("POST", "/admin/segments/"+seg.ID, form, nil); p.Status != http.StatusUnprocessableEntity ||
			!strings.Contains(p.Text("#form-builder"), "display must be one of") {
			t.Errorf("an unknown moment: %d %q", p.Status, p.Text(".field-error"))
		}
	})

	t.Run("TurnedOffKeepsTheToolInactive", func(t *testing.T) {
		c := c.As(t)
		form := webtest.FormValues(c.Get("/admin/segments/" + seg.ID).Doc.Find("#segment-form"))
		form.Del("askInChat")
		if p := c.Do("POST", "/admin/segments/"+seg.ID, form, nil); p.Status != http.StatusSeeOther {
			t.Fatalf("saving: %d %s", p.Status, p.Text(".field-error"))
		}
		if _, tl2 := leadTool(t, "quotes"); tl2 == nil || tl2.IsActive {
			t.Errorf("lead tool after turning the conversation way off: %+v, want kept, inactive", tl2)
		}
		if _, on := c.Get("/admin/segments/" + seg.ID).Doc.Find("#askInChat").Attr("checked"); on {
			t.Error("the conversation box is still ticked")
		}
	})

	t.Run("AskingNeedsAField", func(t *testing.T) {
		c := c.As(t)
		c.Get("/admin/segments/new")
		p := c.Submit("/admin/segments", url.Values{"name": {"Empty"}, "systemPrompt": {"x"}, "isActive": {"true"}, "askInChat": {"true"}})
		if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Text("#err-formConfig"), "at least one field") {
			t.Errorf("asking without fields: %d %q", p.Status, p.Text("#err-formConfig"))
		}
		if _, err := b.DB.Segment(bg, ten.ID, "empty"); parley.ErrorKind(err) != parley.KindNotFound {
			t.Errorf("the segment was stored without its lead tool: %v", err)
		}
	})

	t.Run("RowsInError", func(t *testing.T) {
		c := c.As(t)
		c.Get("/admin/segments/new")
		p := c.Submit("/admin/segments", url.Values{
			"name": {"Rows"}, "systemPrompt": {"x"}, "isActive": {"true"},
			"starters.0.text": {"Fine"}, "starters.1.text": {strings.Repeat("s", 51)},
			"fields.0.label": {"Email"}, "fields.0.type": {"email"}, "fields.1.name": {"email"}, "fields.1.label": {"Email again"}, "fields.1.type": {"email"},
		})
		if p.Status != http.StatusUnprocessableEntity {
			t.Fatalf("status %d, want 422", p.Status)
		}
		var starters, fields []string
		p.Doc.Find("#starters tbody tr").Each(func(i int, s *goquery.Selection) {
			if s.HasClass("row-error") {
				starters = append(starters, s.Find("input[aria-invalid=true]").AttrOr("name", "?"))
			}
		})
		p.Doc.Find("#form-fields tbody tr").Each(func(i int, s *goquery.Selection) {
			if s.HasClass("row-error") {
				fields = append(fields, s.Find("[aria-invalid=true]").AttrOr("name", "?"))
			}
		})
		if !slices.Equal(starters, []string{"starters.1.text"}) || !slices.Equal(fields, []string{"fields.1.name"}) {
			t.Errorf("rows in error: starters %v, fields %v; want the second starter's text and the second field's name", starters, fields)
		}
	})

	t.Run("DeletedWithItsSegment", func(t *testing.T) {
		c := c.As(t)
		c.Get("/admin/segments")
		if p := c.Submit("/admin/segments/"+seg.ID+"/delete", nil); p.Status != http.StatusSeeOther {
			t.Fatalf("deleting a segment whose only tool is its lead tool: %d %s", p.Status, p.Text(".delete-error"))
		}
		if _, err := b.DB.Tool(bg, ten.ID, tl.ID); parley.ErrorKind(err) != parley.KindNotFound {
			t.Errorf("the lead tool outlived its segment: %v", err)
		}
	})
}
