package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley/parley/agent/outbound/caldav/caldavtest"
	"github.com/parley/parley/web/webtest"
)

// exchange sends a JSON request with token and the extra headers, and
// returns the status, the answer's headers and its body decoded (nil when
// it is not a JSON object).
func exchange(t *testing.T, b *webtest.Bundle, method, path, token string, headers map[string]string, body any) (int, http.Header, map[string]any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		r = strings.NewReader(string(raw))
	}
	req, err := http.NewRequest(method, b.TS.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := b.TS.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: bad JSON %q", method, path, raw)
		}
	}
	return resp.StatusCode, resp.Header, out
}

// TestConditionalSettings: each settings-like resource answers its GET and
// PUT with a strong ETag of what is stored; a PUT whose If-Match is stale
// gets 412 PRECONDITION_FAILED and the stored value stays as it was; a
// matching one writes and answers a new tag; `*` and no If-Match write as
// before; another tenant's credential still gets 404, If-Match or not.
func TestConditionalSettings(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	b.WithOutbound(t, true, nil) // the CalDAV server is on loopback
	cal := caldavtest.Start(t)
	for _, tc := range []struct {
		name, plan, path string
		// put makes the n-th change's body; value reads what it set from a GET.
		put   func(n int) map[string]any
		value func(got map[string]any) any
		want  func(n int) any
	}{
		{name: "Tenant", plan: "starter", path: "",
			put:   func(n int) map[string]any { return map[string]any{"botName": "Bot " + string(rune('A'+n))} },
			value: func(got map[string]any) any { return got["tenant"].(map[string]any)["botName"] },
			want:  func(n int) any { return "Bot " + string(rune('A'+n)) }},
		{name: "MCPTools", plan: "builder", path: "/mcp-tools",
			put: func(n int) map[string]any {
				return map[string]any{"mcpToolsUrl": "https://tools.example.com/mcp", "mcpToolsMaxTools": n + 1}
			},
			value: func(got map[string]any) any { return got["mcpToolsMaxTools"] },
			want:  func(n int) any { return float64(n + 1) }},
		{name: "Embeddings", plan: "starter", path: "/embeddings",
			put: func(n int) map[string]any {
				return map[string]any{"embeddingsUrl": "https://embed.example.com/v1", "embeddingsModel": "model-" + string(rune('a'+n))}
			},
			value: func(got map[string]any) any { return got["embeddingsModel"] },
			want:  func(n int) any { return "model-" + string(rune('a'+n)) }},
		{name: "Payments", plan: "starter", path: "/integrations/payments",
			put: func(n int) map[string]any {
				return map[string]any{"secretKey": webtest.StripeTestKey, "successMessage": "Paid " + string(rune('A'+n))}
			},
			value: func(got map[string]any) any { return got["successMessage"] },
			want:  func(n int) any { return "Paid " + string(rune('A'+n)) }},
		{name: "Calendar", plan: "starter", path: "/integrations/calendar",
			put: func(n int) map[string]any {
				return webtest.CalendarBody(cal, map[string]any{"officeHours": map[string]any{"monday": map[string]any{"start": "0" + string(rune('1'+n)) + ":00", "end": "17:00"}}})
			},
			value: func(got map[string]any) any {
				return got["officeHours"].(map[string]any)["monday"].(map[string]any)["start"]
			},
			want: func(n int) any { return "0" + string(rune('1'+n)) + ":00" }},
		{name: "VoiceSetup", plan: "scale", path: "/voice/setup",
			put:   func(n int) map[string]any { return map[string]any{"assistantId": "asst-" + string(rune('a'+n))} },
			value: func(got map[string]any) any { return got["tenant"].(map[string]any)["voiceAssistantId"] },
			want:  func(n int) any { return "asst-" + string(rune('a'+n)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ten := b.NewTenant(t, tc.plan)
			other := b.NewTenant(t, tc.plan)
			path := "/tenants/" + ten.Slug + tc.path
			getPath := path
			if tc.name == "VoiceSetup" {
				getPath = "/tenants/" + ten.Slug // the voice setup is part of the tenant
			}
			get := func() (string, map[string]any) {
				t.Helper()
				st, h, got := exchange(t, b, "GET", getPath, ten.Token, nil, nil)
				if st != http.StatusOK {
					t.Fatalf("GET: %d %v", st, got)
				}
				return h.Get("ETag"), got
			}
			put := func(ifMatch string, n int) (int, string, map[string]any) {
				t.Helper()
				var headers map[string]string
				if ifMatch != "" {
					headers = map[string]string{"If-Match": ifMatch}
				}
				st, h, got := exchange(t, b, "PUT", path, ten.Token, headers, tc.put(n))
				return st, h.Get("ETag"), got
			}

			// A first save without If-Match, as before ETags (a connector
			// has no ETag until it is saved).
			if st, _, got := put("", 0); st != http.StatusOK {
				t.Fatalf("PUT without If-Match: %d %v", st, got)
			}
			e1, _ := get()
			if len(e1) != 34 || e1[0] != '"' || e1[33] != '"' {
				t.Fatalf("ETag %q: want a quoted 32-digit hex tag", e1)
			}
			if again, _ := get(); again != e1 {
				t.Errorf("two GETs of unchanged settings: %q then %q", e1, again)
			}

			// Matching: written, with a new tag, the GET's.
			st, e2, got := put(e1, 1)
			if st != http.StatusOK || e2 == "" || e2 == e1 {
				t.Fatalf("PUT with the current If-Match: %d ETag %q (was %q) %v", st, e2, e1, got)
			}
			if now, got := get(); now != e2 || tc.value(got) != tc.want(1) {
				t.Errorf("after the matching PUT: ETag %q (PUT said %q), value %v", now, e2, tc.value(got))
			}

			// Stale: 412, nothing written, the tag unchanged.
			st, _, got = put(e1, 2)
			if st != http.StatusPreconditionFailed || got["code"] != "PRECONDITION_FAILED" ||
				got["error"] != "The resource changed since you read it; GET it again and retry" {
				t.Fatalf("PUT with a stale If-Match: %d %v", st, got)
			}
			if now, got := get(); now != e2 || tc.value(got) != tc.want(1) {
				t.Errorf("after the stale PUT: ETag %q (want %q), value %v (want %v)", now, e2, tc.value(got), tc.want(1))
			}
			// A list holding the current tag matches; a weak tag never does.
			if st, _, got = put(`"0123", `+e2, 3); st != http.StatusOK {
				t.Errorf("If-Match listing the current tag: %d %v", st, got)
			}
			e3, _ := get()
			if st, _, got = put("W/"+e3, 4); st != http.StatusPreconditionFailed {
				t.Errorf("a weak If-Match: %d %v", st, got)
			}
			// `*` writes whatever is stored.
			if st, _, got = put("*", 5); st != http.StatusOK {
				t.Errorf("If-Match *: %d %v", st, got)
			}
			if _, got := get(); tc.value(got) != tc.want(5) {
				t.Errorf("after If-Match *: %v", tc.value(got))
			}

			// Another tenant's credential: 404 as ever, If-Match or not,
			// and nothing written.
			e5, _ := get()
			st, _, got = exchange(t, b, "PUT", path, other.Token, map[string]string{"If-Match": e5}, tc.put(6))
			if st != http.StatusNotFound || got["error"] != "Tenant not found" {
				t.Errorf("another tenant's token: %d %v", st, got)
			}
			if now, _ := get(); now != e5 {
				t.Errorf("another tenant's PUT changed the ETag: %q to %q", e5, now)
			}
		})
	}
}

// TestConditionalSettingsRace: PUTs sent at once with the same If-Match
// cannot all win: the check and the write are one transaction, so exactly
// one is written and the others get 412. The tenant's row is held locked
// until all of them wait on it, so that each has passed the handler's early
// check: without the check on the locked row, every one would be written.
func TestConditionalSettingsRace(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "starter")
	path := "/tenants/" + ten.Slug
	_, h, _ := exchange(t, b, "GET", path, ten.Token, nil, nil)
	etag := h.Get("ETag")
	const n = 6
	hold, err := b.DB.Pool().Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback(context.Background())
	if _, err := hold.Exec(t.Context(), `SELECT 1 FROM tenants WHERE id = $1 FOR UPDATE`, ten.ID); err != nil {
		t.Fatal(err)
	}
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			statuses[i], _, _ = exchange(t, b, "PUT", path, ten.Token, map[string]string{"If-Match": etag},
				map[string]any{"botName": "Racer " + string(rune('A'+i))})
		})
	}
	// Every PUT waits on the row (or 10 s pass: the test then only loses
	// strength), and then the row is let go.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b.Count(t, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FROM tenants%FOR UPDATE%'`) >= n {
			break
		}
	}
	if err := hold.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	won := 0
	for _, st := range statuses {
		switch st {
		case http.StatusOK:
			won++
		case http.StatusPreconditionFailed:
		default:
			t.Errorf("a racing PUT: %d", st)
		}
	}
	if won != 1 {
		t.Errorf("%d of %d PUTs with one If-Match were written (%v), want 1", won, n, statuses)
	}
}

// TestConditionalSettingsNotModified: the GETs whose whole answer the ETag
// covers answer 304 with no body when If-None-Match holds it, and 200 when
// it does not; a payment connector never saved has no ETag, and an
// If-Match on it gets 412 and connects nothing.
func TestConditionalSettingsNotModified(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "builder")
	pay := "/tenants/" + ten.Slug + "/integrations/payments"
	st, h, _ := exchange(t, b, "GET", pay, ten.Token, nil, nil)
	if st != http.StatusOK || h.Get("ETag") != "" {
		t.Fatalf("GET of no connector: %d ETag %q", st, h.Get("ETag"))
	}
	st, _, got := exchange(t, b, "PUT", pay, ten.Token, map[string]string{"If-Match": `"0123456789abcdef0123456789abcdef"`},
		map[string]any{"secretKey": webtest.StripeTestKey})
	if st != http.StatusPreconditionFailed || got["code"] != "PRECONDITION_FAILED" {
		t.Errorf("If-Match on no connector: %d %v", st, got)
	}
	if n := b.Count(t, `SELECT count(*) FROM payment_connectors WHERE tenant_id = $1`, ten.ID); n != 0 {
		t.Errorf("a refused conditional save stored a connector")
	}
	if st, _, got = exchange(t, b, "PUT", pay, ten.Token, nil, map[string]any{"secretKey": webtest.StripeTestKey}); st != http.StatusOK {
		t.Fatalf("connecting: %d %v", st, got)
	}
	for _, path := range []string{pay, "/tenants/" + ten.Slug + "/mcp-tools"} {
		_, h, _ := exchange(t, b, "GET", path, ten.Token, nil, nil)
		etag := h.Get("ETag")
		st, h, _ := exchange(t, b, "GET", path, ten.Token, map[string]string{"If-None-Match": etag}, nil)
		if st != http.StatusNotModified || h.Get("ETag") != etag {
			t.Errorf("GET %s with its ETag in If-None-Match: %d ETag %q", path, st, h.Get("ETag"))
		}
		if st, _, got := exchange(t, b, "GET", path, ten.Token, map[string]string{"If-None-Match": `"stale"`}, nil); st != http.StatusOK || got == nil {
			t.Errorf("GET %s with another ETag in If-None-Match: %d %v", path, st, got)
		}
	}
}
