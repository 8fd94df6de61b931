package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

// synonymTerms is n distinct terms.
func synonymTerms(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("term %d", i+1)
	}
	return out
}

func TestSynonymsAPI(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)

	t.Run("CreateListShowUpdateDelete", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "starter")
		path := "/tenants/" + ten.Slug + "/synonyms"

		var list []map[string]any
		webtest.DecodeJSON(t, b.Raw(t, "GET", path, ten.Token, nil), &list)
		if list == nil || len(list) != 0 {
			t.Fatalf("empty list = %v, want []", list)
		}

		g := b.MustDo(t, 201, "POST", path, ten.Token, map[string]any{"terms": []string{" bike ", "push   bike", "bicycle"}})
		id, _ := g["id"].(string)
		if got := fmt.Sprint(g["terms"]); got != "[bike push bike bicycle]" || id == "" || g["createdAt"] == nil || g["updatedAt"] == nil {
			t.Fatalf("created %v: terms %s", g, got)
		}
		second := b.MustDo(t, 201, "POST", path, ten.Token, map[string]any{"terms": []string{"opening hours", "when are you open"}})

		webtest.DecodeJSON(t, b.Raw(t, "GET", path, ten.Token, nil), &list)
		if len(list) != 2 || list[0]["id"] != id || list[1]["id"] != second["id"] {
			t.Fatalf("list = %v, want the two groups oldest first", list)
		}
		if got := b.MustDo(t, 200, "GET", path+"/"+id, ten.Token, nil); fmt.Sprint(got["terms"]) != "[bike push bike bicycle]" {
			t.Errorf("GET one = %v", got)
		}

		got := b.MustDo(t, 200, "PUT", path+"/"+id, ten.Token, map[string]any{"terms": []string{"bike", "cycle"}})
		if fmt.Sprint(got["terms"]) != "[bike cycle]" || got["id"] != id {
			t.Errorf("PUT = %v", got)
		}
		got = b.MustDo(t, 200, "PATCH", path+"/"+id, ten.Token, map[string]any{"terms": []string{"bike", "cycle", "velo"}, "id": "ignored"})
		if fmt.Sprint(got["terms"]) != "[bike cycle velo]" || got["id"] != id {
			t.Errorf("PATCH = %v", got)
		}

		if got := b.MustDo(t, 200, "DELETE", path+"/"+id, ten.Token, nil); got["deleted"] != true || got["id"] != id {
			t.Errorf("DELETE = %v", got)
		}
		b.MustDo(t, 404, "GET", path+"/"+id, ten.Token, nil)
		b.MustDo(t, 404, "DELETE", path+"/"+id, ten.Token, nil)
		webtest.DecodeJSON(t, b.Raw(t, "GET", path, ten.Token, nil), &list)
		if len(list) != 1 || list[0]["id"] != second["id"] {
			t.Errorf("list after delete = %v", list)
		}
	})

	t.Run("Validation", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "starter")
		path := "/tenants/" + ten.Slug + "/synonyms"
		existing := b.MustDo(t, 201, "POST", path, ten.Token, map[string]any{"terms": []string{"a", "b"}})
		one := path + "/" + existing["id"].(string)
		long := strings.Repeat("é", parley.MaxSynonymTermChars)

		// docValid: whether openapi.json accepts the body (it cannot say
		// that terms differ, letter case aside, or hold a letter).
		c := &webtest.OpenAPIChecker{T: t, B: b}
		for _, tc := range []struct {
			name     string
			body     any
			want     int
			docValid bool
		}{
			{"TwoTerms", map[string]any{"terms": synonymTerms(2)}, 201, true},
			{"TwentyTerms", map[string]any{"terms": synonymTerms(20)}, 201, true},
			{"SixtyChars", map[string]any{"terms": []string{long, "short"}}, 201, true},
			{"OneTerm", map[string]any{"terms": synonymTerms(1)}, 400, false},
			{"NoTerm", map[string]any{"terms": []string{}}, 400, false},
			{"TwentyOneTerms", map[string]any{"terms": synonymTerms(21)}, 400, false},
			{"SixtyOneChars", map[string]any{"terms": []string{long + "x", "short"}}, 400, false},
			{"Twice", map[string]any{"terms": []string{"Bike", "bike "}}, 400, true},
			{"NoLetter", map[string]any{"terms": []string{"bike", " -- "}}, 400, true},
			{"Empty", map[string]any{"terms": []string{"bike", ""}}, 400, false},
			{"Missing", map[string]any{}, 400, false},
			{"Null", `{"terms": null}`, 400, false},
			{"String", `{"terms": "bike, bicycle"}`, 400, false},
			{"NumberInArray", `{"terms": ["bike", 1]}`, 400, false},
			{"Object", `{"terms": {"a": "b"}}`, 400, false},
			{"NUL", `{"terms": ["bi\u0000ke", "bicycle"]}`, 400, true},
			{"NotAnObject", `["bike", "bicycle"]`, 400, false},
			{"Malformed", `{"terms": ["bike",`, 400, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := &webtest.OpenAPIChecker{T: t, B: c.B}
				raw, ok := tc.body.(string)
				if !ok {
					buf, _ := json.Marshal(tc.body)
					raw = string(buf)
				}
				for _, req := range []struct{ method, path string }{{"POST", path}, {"PUT", one}, {"PATCH", one}} {
					want := tc.want
					if want == 201 && req.method != "POST" {
						want = 200
					}
					status, body := c.ExchangeRaw(req.method, req.path, ten.Token, "application/json", []byte(raw), tc.docValid)
					got, _ := body.(map[string]any)
					if status != want {
						t.Errorf("%s: %d %v, want %d", req.method, status, body, want)
						continue
					}
					if status != 400 {
						continue
					}
					if msg, _ := got["error"].(string); msg == "" {
						t.Errorf("%s: no error message in %v", req.method, got)
					}
					if tc.name != "NotAnObject" && tc.name != "Malformed" {
						if d, _ := got["details"].(map[string]any); d["terms"] == nil {
							t.Errorf("%s: %v has no details.terms", req.method, got)
						}
					}
				}
			})
		}
		if got := b.MustDo(t, 200, "GET", one, ten.Token, nil); fmt.Sprint(got["terms"]) != "["+long+" short]" {
			t.Errorf("the group after the replaces = %v, want the last good one", got)
		}
	})

	t.Run("Limit", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "starter")
		path := "/tenants/" + ten.Slug + "/synonyms"
		b.Exec(t, `INSERT INTO corpus_synonyms (tenant_id, terms)
			SELECT $1, ARRAY['word ' || g, 'other ' || g] FROM generate_series(1, $2::int - 1) g`, ten.ID, parley.MaxSynonymGroups)
		last := b.MustDo(t, 201, "POST", path, ten.Token, map[string]any{"terms": []string{"bike", "bicycle"}})
		got := b.MustDo(t, 429, "POST", path, ten.Token, map[string]any{"terms": []string{"car", "automobile"}})
		d, _ := got["details"].(map[string]any)
		if got["code"] != "LIMIT_REACHED" || d["current"] != float64(parley.MaxSynonymGroups) || d["limit"] != float64(parley.MaxSynonymGroups) {
			t.Errorf("501st group: %v", got)
		}
		if n := b.Count(t, `SELECT count(*) FROM corpus_synonyms WHERE tenant_id = $1`, ten.ID); n != parley.MaxSynonymGroups {
			t.Errorf("%d groups, want %d", n, parley.MaxSynonymGroups)
		}
		// A replace is not an addition: it goes at the limit.
		b.MustDo(t, 200, "PUT", path+"/"+last["id"].(string), ten.Token, map[string]any{"terms": []string{"bike", "cycle"}})
		var list []map[string]any
		webtest.DecodeJSON(t, b.Raw(t, "GET", path, ten.Token, nil), &list)
		if len(list) != parley.MaxSynonymGroups {
			t.Errorf("list of %d groups, want %d", len(list), parley.MaxSynonymGroups)
		}
		// Deleting one makes room for one.
		b.MustDo(t, 200, "DELETE", path+"/"+last["id"].(string), ten.Token, nil)
		b.MustDo(t, 201, "POST", path, ten.Token, map[string]any{"terms": []string{"car", "automobile"}})
	})

	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		ten, other := b.NewTenant(t, "starter"), b.NewTenant(t, "starter")
		path := "/tenants/" + ten.Slug + "/synonyms/"
		theirs := b.MustDo(t, 201, "POST", "/tenants/"+other.Slug+"/synonyms", other.Token, map[string]any{"terms": []string{"bike", "bicycle"}})
		body := map[string]any{"terms": []string{"car", "automobile"}}
		for _, id := range []string{"00000000-0000-0000-0000-000000000000", "nope", "1", theirs["id"].(string)} {
			for _, method := range []string{"GET", "PUT", "PATCH", "DELETE"} {
				var send any
				if method == "PUT" || method == "PATCH" {
					send = body
				}
				if status, got := b.Do(t, method, path+id, ten.Token, send); status != 404 || got["error"] != "Synonym group not found" {
					t.Errorf("%s %s: %d %v, want 404 Synonym group not found", method, id, status, got)
				}
			}
		}
		// Their group is untouched, and another tenant's token does not reach ours.
		if got := b.MustDo(t, 200, "GET", "/tenants/"+other.Slug+"/synonyms/"+theirs["id"].(string), other.Token, nil); fmt.Sprint(got["terms"]) != "[bike bicycle]" {
			t.Errorf("their group = %v", got)
		}
		b.MustDo(t, 404, "GET", "/tenants/"+other.Slug+"/synonyms", ten.Token, nil)
	})

	t.Run("Scopes", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "starter")
		path := "/tenants/" + ten.Slug + "/synonyms"
		g := b.MustDo(t, 201, "POST", path, ten.Token, map[string]any{"terms": []string{"bike", "bicycle"}})
		one := path + "/" + g["id"].(string)
		body := map[string]any{"terms": []string{"car", "automobile"}}
		reader := b.Token(t, ten.ID, auth.ScopeCorpusRead)
		for _, req := range []struct {
			method, path string
			body         any
		}{{"POST", path, body}, {"PUT", one, body}, {"PATCH", one, body}, {"DELETE", one, nil}} {
			status, got := b.Do(t, req.method, req.path, reader, req.body)
			d, _ := got["details"].(map[string]any)
			if status != http.StatusForbidden || got["error"] != "Missing scope: corpus:write" || d["requiredScope"] != auth.ScopeCorpusWrite {
				t.Errorf("%s with corpus:read only: %d %v", req.method, status, got)
			}
		}
		b.MustDo(t, 200, "GET", one, reader, nil)
		writer := b.Token(t, ten.ID, auth.ScopeCorpusWrite)
		for _, p := range []string{path, one} {
			if status, got := b.Do(t, "GET", p, writer, nil); status != http.StatusForbidden || got["error"] != "Missing scope: corpus:read" {
				t.Errorf("GET %s with corpus:write only: %d %v", p, status, got)
			}
		}
		b.MustDo(t, 201, "POST", path, writer, body)
		b.MustDo(t, 401, "GET", path, "", nil)
	})
}
