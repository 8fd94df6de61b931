package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

// readCSV parses an export, failing the test when it is not RFC 4180 CSV.
func readCSV(t *testing.T, raw []byte) [][]string {
	t.Helper()
	records, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil {
		t.Fatalf("export is not CSV: %v\n%s", err, raw)
	}
	return records
}

var exportHeader = []string{"id", "created_at", "updated_at", "channel", "status", "visitor_type", "segment", "page_url",
	"message_count", "tool_calls_count", "intent"}

func TestConversationsExport(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ctx := context.Background()

	t.Run("CSVColumnsQuotingAndFormulas", func(t *testing.T) {
		t.Parallel()
		ct := b.NewConvTenant(t)
		def, err := b.DB.Segment(ctx, ct.ID, "default")
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		withPage := func(page string, created time.Time, turns ...string) parley.Conversation {
			return b.AddConversation(t, ct, webtest.SeedConversation{
				Start: func(p *parley.ConversationStart) { p.PageURL, p.SegmentID = &page, &def.ID },
				Turns: turns, Created: created,
			})
		}
		quoted := withPage("https://example.com/a,b?q=\"x\"\nnext", now.Add(-time.Minute), "Pricing, please?", "49 EUR.")
		formulas := map[string]parley.Conversation{}
		for i, cell := range []string{"=HYPERLINK(\"https://evil.test\",\"x\")", "+1+1", "-2+3", "@SUM(A1)", "\tcmd"} {
			formulas[cell] = withPage(cell, now.Add(-time.Duration(i+2)*time.Minute), "hi")
		}
		voice := b.AddConversation(t, ct, webtest.SeedConversation{
			Start:    func(p *parley.ConversationStart) { p.Channel = "voice" },
			Turns:    []string{"I want a human", "Connecting you."},
			Tools:    []parley.ToolCall{{ToolName: "handoff", ToolType: "ESCALATE_TO_HUMAN", Input: json.RawMessage(`{}`)}},
			Escalate: true, Created: now.Add(-10 * time.Minute),
		})
		old := withPage("https://example.com/old", now.Add(-40*24*time.Hour), "Old question")
		other := b.NewConvTenant(t)
		b.AddConversation(t, other, webtest.SeedConversation{Turns: []string{"Pricing, please?"}})

		status, header, raw := b.GetRaw(t, ct.Base+"/export", ct.Token)
		if status != http.StatusOK || header.Get("Content-Type") != "text/csv; charset=utf-8" ||
			!strings.HasPrefix(header.Get("Content-Disposition"), `attachment; filename="conversations-`+ct.Slug+`-`) ||
			!strings.HasSuffix(header.Get("Content-Disposition"), `.csv"`) {
			t.Fatalf("export: %d %v %s", status, header, raw)
		}
		if !bytes.HasPrefix(raw, []byte(strings.Join(exportHeader, ",")+"\r\n")) || !bytes.HasSuffix(raw, []byte("\r\n")) {
			t.Errorf("not a CRLF header row: %q", raw)
		}
		// a line break within a cell is written CRLF too, as encoding/csv does with UseCRLF
		if !bytes.Contains(raw, []byte(`,"https://example.com/a,b?q=""x""`+"\r\nnext\",")) {
			t.Errorf("page_url not quoted as RFC 4180 says: %q", raw)
		}
		records := readCSV(t, raw)
		if !slices.Equal(records[0], exportHeader) {
			t.Errorf("header %v", records[0])
		}
		var ids []string
		byID := map[string][]string{}
		for _, r := range records[1:] {
			ids = append(ids, r[0])
			byID[r[0]] = r
		}
		want := []string{quoted.ID}
		for _, cell := range []string{"=HYPERLINK(\"https://evil.test\",\"x\")", "+1+1", "-2+3", "@SUM(A1)", "\tcmd"} {
			want = append(want, formulas[cell].ID)
		}
		want = append(want, voice.ID)
		if !slices.Equal(ids, want) {
			t.Fatalf("rows %v, want %v (the 40-day-old one and the other tenant's left out)", ids, want)
		}
		q := byID[quoted.ID]
		if !slices.Equal(q[3:], []string{"web", "BOT", "human", "default", "https://example.com/a,b?q=\"x\"\nnext", "2", "0", "pricing please"}) ||
			q[1] != quoted.CreatedAt.UTC().Format(time.RFC3339Nano) || q[2] != quoted.UpdatedAt.UTC().Format(time.RFC3339Nano) {
			t.Errorf("quoted row %q", q)
		}
		for cell, conv := range formulas {
			if got := byID[conv.ID][7]; got != "'"+cell {
				t.Errorf("page_url %q exported as %q, want it neutralised", cell, got)
			}
		}
		if v := byID[voice.ID]; !slices.Equal(v[3:], []string{"voice", "ESCALATED", "human", "", "", "2", "1", "i want a human"}) {
			t.Errorf("voice row %q", v)
		}

		for q, want := range map[string][]string{
			"?channel=voice":           {voice.ID},
			"?segment=default&limit=1": {quoted.ID},
			"?from=" + now.AddDate(0, 0, -41).Format(time.DateOnly) + "&channel=web&limit=7": append(append([]string{}, want[:6]...), old.ID),
			"?to=" + now.AddDate(0, 0, -30).Format(time.RFC3339):                             {old.ID},
			"?from=2025-01-01&to=2025-12-31":                                                 nil,
		} {
			status, _, raw := b.GetRaw(t, ct.Base+"/export"+q, ct.Token)
			records := readCSV(t, raw)
			var got []string
			for _, r := range records[1:] {
				got = append(got, r[0])
			}
			if status != http.StatusOK || !slices.Equal(records[0], exportHeader) || !slices.Equal(got, want) {
				t.Errorf("export %s: %d %v, want %v", q, status, got, want)
			}
		}
	})

	t.Run("NDJSON", func(t *testing.T) {
		t.Parallel()
		ct := b.NewConvTenant(t)
		page := "=cmd|' /C calc'!A0"
		first := b.AddConversation(t, ct, webtest.SeedConversation{Start: func(p *parley.ConversationStart) { p.PageURL = &page },
			Turns: []string{"Hello, there!", "Hi."}, Created: time.Now().Add(-time.Hour)})
		second := b.AddConversation(t, ct, webtest.SeedConversation{Turns: []string{"🙂 !"}}) // nothing left of it for an intent
		status, header, raw := b.GetRaw(t, ct.Base+"/export?format=ndjson", ct.Token)
		if status != http.StatusOK || header.Get("Content-Type") != "application/x-ndjson" || !strings.HasSuffix(header.Get("Content-Disposition"), `.ndjson"`) {
			t.Fatalf("export: %d %v %s", status, header, raw)
		}
		schema := webtest.LoadOpenAPI(t).Components.Schemas["ConversationExportRow"].Value
		var lines []map[string]any
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			var v map[string]any
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			if err := schema.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
				t.Errorf("line %q does not match ConversationExportRow: %v", sc.Text(), err)
			}
			webtest.DocumentedKeys(t, "ndjson line", schema, v)
			lines = append(lines, v)
		}
		if len(lines) != 2 || !bytes.HasSuffix(raw, []byte("}\n")) {
			t.Fatalf("lines %v", lines)
		}
		if l := lines[1]; l["id"] != first.ID || l["page_url"] != page || l["intent"] != "hello there" || l["message_count"] != float64(2) ||
			l["segment"] != nil || l["channel"] != "web" || l["created_at"] != first.CreatedAt.UTC().Format(time.RFC3339Nano) {
			t.Errorf("first conversation %v", l)
		}
		if l := lines[0]; l["id"] != second.ID || l["intent"] != nil || l["page_url"] != nil || l["message_count"] != float64(1) {
			t.Errorf("second conversation %v", l)
		}
		// nothing to export: an empty body
		empty := b.NewConvTenant(t)
		if status, _, raw := b.GetRaw(t, empty.Base+"/export?format=ndjson", empty.Token); status != http.StatusOK || len(raw) != 0 {
			t.Errorf("empty ndjson: %d %q", status, raw)
		}
		if status, _, raw := b.GetRaw(t, empty.Base+"/export", empty.Token); status != http.StatusOK || string(raw) != strings.Join(exportHeader, ",")+"\r\n" {
			t.Errorf("empty csv: %d %q", status, raw)
		}
	})

	t.Run("LimitAtNAndNPlusOne", func(t *testing.T) {
		t.Parallel()
		ct := b.NewConvTenant(t)
		// 1,001 conversations inserted in one statement: the row limits are what is tested here
		if _, err := b.DB.Pool().Exec(ctx, `INSERT INTO conversations (tenant_id, session_id, created_at)
			SELECT $1, 'bulk-' || i, now() - i * interval '1 second' FROM generate_series(1, 1001) i`, ct.ID); err != nil {
			t.Fatal(err)
		}
		for q, rows := range map[string]int{"": 1000, "?limit=1000": 1000, "?limit=1001": 1001, "?limit=5000": 1001, "?limit=1": 1, "?format=ndjson": 1000} {
			status, _, raw := b.GetRaw(t, ct.Base+"/export"+q, ct.Token)
			n := bytes.Count(raw, []byte("\n"))
			if !strings.Contains(q, "ndjson") {
				n-- // the header row
			}
			if status != http.StatusOK || n != rows {
				t.Errorf("export%s: %d, %d rows, want %d", q, status, n, rows)
			}
		}
	})

	t.Run("QueryValidation", func(t *testing.T) {
		t.Parallel()
		ct := b.NewConvTenant(t)
		for q, param := range map[string]string{
			"?limit=0": "limit", "?limit=5001": "limit", "?limit=x": "limit", "?format=xml": "format", "?format=CSV": "format",
			"?from=yesterday": "from", "?to=2026-02-30": "to", "?from=2026-03-02&to=2026-03-01": "to",
			"?from=2024-01-01&to=2025-01-02": "from", "?from=2020-01-01": "from", "?channel=fax": "channel", "?segment=nope": "segment",
		} {
			status, body := b.Do(t, "GET", ct.Base+"/export"+q, ct.Token, nil)
			if status != http.StatusBadRequest || !strings.HasPrefix(fmt.Sprint(body["error"]), param+" ") || webtest.ErrorDetails(body)[param] == nil {
				t.Errorf("export%s: %d %v, want 400 naming %s", q, status, body, param)
			}
		}
		for _, q := range []string{"?from=2024-01-01&to=2024-12-31", "?limit=5000", "?format=csv", "?format=ndjson", "?unknown=1", "?status=nope"} {
			if status, _, raw := b.GetRaw(t, ct.Base+"/export"+q, ct.Token); status != http.StatusOK {
				t.Errorf("export%s: %d %s", q, status, raw)
			}
		}
	})

	t.Run("Scopes", func(t *testing.T) {
		t.Parallel()
		ct := b.NewConvTenant(t)
		if status, _, raw := b.GetRaw(t, ct.Base+"/export", b.Token(t, ct.ID, auth.ScopeConversationsRead)); status != http.StatusOK {
			t.Errorf("export with conversations:read: %d %s", status, raw)
		}
		if status, body := b.Do(t, "GET", ct.Base+"/export", b.Token(t, ct.ID, auth.ScopeStatsRead), nil); status != http.StatusForbidden || body["error"] != "Missing scope: conversations:read" {
			t.Errorf("export with stats:read: %d %v", status, body)
		}
		other := b.NewConvTenant(t)
		if status, _ := b.Do(t, "GET", ct.Base+"/export", other.Token, nil); status != http.StatusNotFound {
			t.Errorf("export with another tenant's token: %d", status)
		}
	})
}
