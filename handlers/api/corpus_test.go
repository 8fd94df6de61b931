package api_test

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

func TestCorpus(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)

	t.Run("CreateDefaultsAndUpsert", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/corpus"
		st, body := b.Do(t, "POST", path, ten.Token, map[string]any{"title": " Pricing ", "content": "Plans cost 10 EUR."})
		e := body["corpus"].(map[string]any)
		if st != 201 || body["created"] != true || e["title"] != "Pricing" || e["priority"] != float64(5) || e["isActive"] != true || e["segment"] != nil {
			t.Fatalf("create: %d %v", st, body)
		}
		if _, ok := e["locale"]; ok {
			t.Errorf("locale is write-only: %v", e)
		}
		st, body = b.Do(t, "POST", path, ten.Token, map[string]any{"title": "FAQ", "content": "v1", "externalId": "faq-1", "locale": "FR-ca", "tags": []string{"faq", "faq", " help "}})
		if st != 201 || body["created"] != true {
			t.Fatalf("create with externalId: %d %v", st, body)
		}
		id := body["corpus"].(map[string]any)["id"]
		if tags := body["corpus"].(map[string]any)["tags"].([]any); len(tags) != 2 || tags[1] != "help" {
			t.Errorf("tags = %v", tags)
		}
		st, body = b.Do(t, "POST", path, ten.Token, map[string]any{"title": "FAQ", "content": "v2", "externalId": "faq-1"})
		if st != 200 || body["created"] != false || body["corpus"].(map[string]any)["id"] != id || body["corpus"].(map[string]any)["content"] != "v2" {
			t.Errorf("upsert: %d %v", st, body)
		}
		var locale string
		if err := b.DB.Pool().QueryRow(t.Context(), `SELECT locale FROM corpus_entries WHERE id = $1`, id).Scan(&locale); err != nil || locale != "fr-ca" {
			t.Errorf("stored locale %q %v", locale, err)
		}
	})

	t.Run("FieldLimits", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/corpus"
		base := func(extra map[string]any) map[string]any {
			m := map[string]any{"title": "t", "content": "c"}
			for k, v := range extra {
				m[k] = v
			}
			return m
		}
		cases := []struct {
			name  string
			body  map[string]any
			field string
		}{
			{"Title255", base(map[string]any{"title": strings.Repeat("t", 255)}), ""},
			{"Title256", base(map[string]any{"title": strings.Repeat("t", 256)}), "title"},
			{"TitleMissing", map[string]any{"content": "c"}, "title"},
			{"TitleEmpty", base(map[string]any{"title": " "}), "title"},
			{"Content50000", base(map[string]any{"content": strings.Repeat("é", 50000)}), ""},
			{"Content50001", base(map[string]any{"content": strings.Repeat("c", 50001)}), "content"},
			{"ContentMissing", map[string]any{"title": "t"}, "content"},
			{"Summary500", base(map[string]any{"summary": strings.Repeat("s", 500)}), ""},
			{"Summary501", base(map[string]any{"summary": strings.Repeat("s", 501)}), "summary"},
			{"Source50", base(map[string]any{"source": strings.Repeat("s", 50)}), ""},
			{"Source51", base(map[string]any{"source": strings.Repeat("s", 51)}), "source"},
			{"SourceURL500", base(map[string]any{"sourceUrl": "https://e.com/" + strings.Repeat("p", 486)}), ""},
			{"SourceURL501", base(map[string]any{"sourceUrl": "https://e.com/" + strings.Repeat("p", 487)}), "sourceUrl"},
			{"SourceURLNotURI", base(map[string]any{"sourceUrl": "not a url"}), "sourceUrl"},
			{"ExternalID255", base(map[string]any{"externalId": strings.Repeat("x", 255)}), ""},
			{"ExternalID256", base(map[string]any{"externalId": strings.Repeat("y", 256)}), "externalId"},
			{"Priority0", base(map[string]any{"priority": 0}), ""},
			{"Priority100", base(map[string]any{"priority": 100}), ""},
			{"PriorityMinus1", base(map[string]any{"priority": -1}), "priority"},
			{"Priority101", base(map[string]any{"priority": 101}), "priority"},
			{"PriorityFloat", base(map[string]any{"priority": 2.5}), "priority"},
			{"LocaleEn", base(map[string]any{"locale": "en"}), ""},
			{"LocaleEnGB", base(map[string]any{"locale": "en-GB"}), ""},
			{"LocaleBad", base(map[string]any{"locale": "english"}), "locale"},
			{"LocaleThreeLetters", base(map[string]any{"locale": "eng"}), "locale"},
			{"TagsNotArray", base(map[string]any{"tags": "a"}), "tags"},
			{"Tags21", base(map[string]any{"tags": manyTags(21)}), "tags"},
			{"Tags20", base(map[string]any{"tags": manyTags(20)}), ""},
			{"UnknownSegment", base(map[string]any{"segmentSlug": "nope"}), "segmentSlug"},
			{"UnknownSegmentVariant", base(map[string]any{"segment": "nope"}), "segment"},
			{"IsActiveNumber", base(map[string]any{"isActive": 1}), "isActive"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				st, body := b.Do(t, "POST", path, ten.Token, tc.body)
				if tc.field == "" {
					if st != 201 {
						t.Fatalf("want 201, got %d %v", st, body)
					}
					return
				}
				if st != 400 || body["details"].(map[string]any)[tc.field] == nil {
					t.Fatalf("want 400 on %s, got %d %v", tc.field, st, body)
				}
			})
		}
	})

	t.Run("ListFilterSearchPaginate", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/corpus"
		b.Do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token, map[string]any{"name": "Pros", "systemPrompt": "p"})
		for i := 0; i < 5; i++ {
			b.Do(t, "POST", path, ten.Token, map[string]any{"title": fmt.Sprintf("General %d", i), "content": "Opening hours are nine to five.", "priority": 10 + i})
		}
		b.Do(t, "POST", path, ten.Token, map[string]any{"title": "Wholesale", "content": "Our wholesale pricing starts at 100 units.", "segmentSlug": "pros"})
		b.Do(t, "POST", path, ten.Token, map[string]any{"title": "Delivery", "content": "Shipping takes two days.", "segment": "pros"})

		_, all := b.Do(t, "GET", path+"?limit=3&page=2", ten.Token, nil)
		p := all["pagination"].(map[string]any)
		if p["total"] != float64(7) || p["totalPages"] != float64(3) || p["page"] != float64(2) || p["limit"] != float64(3) || len(all["corpus"].([]any)) != 3 {
			t.Errorf("page 2: %v", all)
		}
		_, first := b.Do(t, "GET", path+"?limit=1", ten.Token, nil)
		if first["corpus"].([]any)[0].(map[string]any)["title"] != "General 4" {
			t.Errorf("highest priority first: %v", first["corpus"])
		}
		for _, q := range []string{"?segmentSlug=pros", "?segment=pros"} {
			_, seg := b.Do(t, "GET", path+q, ten.Token, nil)
			if seg["pagination"].(map[string]any)["total"] != float64(2) {
				t.Errorf("%s: %v", q, seg)
			}
			if s := seg["corpus"].([]any)[0].(map[string]any)["segment"].(map[string]any); s["slug"] != "pros" || s["name"] != "Pros" {
				t.Errorf("segment object: %v", s)
			}
		}
		_, found := b.Do(t, "GET", path+"?search=price", ten.Token, nil) // stems to "pricing"
		if c := found["corpus"].([]any); len(c) != 1 || c[0].(map[string]any)["title"] != "Wholesale" {
			t.Errorf("search price: %v", found)
		}
		_, found = b.Do(t, "GET", path+"?search=eliver", ten.Token, nil) // title substring
		if c := found["corpus"].([]any); len(c) != 1 || c[0].(map[string]any)["title"] != "Delivery" {
			t.Errorf("search substring: %v", found)
		}
		_, found = b.Do(t, "GET", path+"?search=%25", ten.Token, nil)
		if found["pagination"].(map[string]any)["total"] != float64(0) {
			t.Errorf("a %% in search is literal, not a wildcard: %v", found)
		}
		for _, q := range []string{"?page=0", "?page=x", "?limit=0", "?limit=101", "?segmentSlug=nope"} {
			if st, body := b.Do(t, "GET", path+q, ten.Token, nil); st != 400 {
				t.Errorf("%s: %d %v", q, st, body)
			}
		}
		if st, _ := b.Do(t, "GET", path+"?limit=100&unknown=1", ten.Token, nil); st != 200 {
			t.Errorf("limit 100 with unknown parameter: %d", st)
		}
	})

	t.Run("SearchTotalCappedPastFiveHundred", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		if _, err := b.DB.Pool().Exec(t.Context(), `INSERT INTO corpus_entries (tenant_id, title, content, priority)
			SELECT $1, 'Entry ' || g, CASE WHEN g <= 1001 THEN 'common word' ELSE 'other' END, g % 100
			FROM generate_series(1, 1100) g`, ten.ID); err != nil {
			t.Fatal(err)
		}
		_, body := b.Do(t, "GET", "/tenants/"+ten.Slug+"/corpus?search=common&limit=5", ten.Token, nil)
		p := body["pagination"].(map[string]any)
		c := body["corpus"].([]any)
		if p["total"] != float64(500) || p["totalCapped"] != true || len(c) != 5 || c[0].(map[string]any)["priority"] != float64(99) {
			t.Errorf("capped search: %v, first %v", p, c[0])
		}
		_, body = b.Do(t, "GET", "/tenants/"+ten.Slug+"/corpus?search=other", ten.Token, nil)
		if p := body["pagination"].(map[string]any); p["total"] != float64(99) || p["totalCapped"] != nil {
			t.Errorf("uncapped search: %v", p)
		}
		_, body = b.Do(t, "GET", "/tenants/"+ten.Slug+"/corpus?search=other&page=99", ten.Token, nil)
		if p := body["pagination"].(map[string]any); p["total"] != float64(99) || len(body["corpus"].([]any)) != 0 {
			t.Errorf("past the last page: %v", body)
		}
	})

	t.Run("GetUpdateDelete", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		other := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/corpus"
		_, body := b.Do(t, "POST", path, ten.Token, map[string]any{"title": "T", "content": "C", "summary": "S", "priority": 7})
		id := body["corpus"].(map[string]any)["id"].(string)
		for _, method := range []string{"PUT", "PATCH"} {
			st, upd := b.Do(t, method, path+"/"+id, ten.Token, map[string]any{"title": "T " + method})
			e := upd["corpus"].(map[string]any)
			if st != 200 || e["title"] != "T "+method || e["content"] != "C" || e["summary"] != "S" || e["priority"] != float64(7) {
				t.Errorf("%s partial: %d %v", method, st, upd)
			}
		}
		st, upd := b.Do(t, "PATCH", path+"/"+id, ten.Token, map[string]any{"summary": nil, "isActive": false})
		if st != 200 || upd["corpus"].(map[string]any)["summary"] != nil || upd["corpus"].(map[string]any)["isActive"] != false {
			t.Errorf("clear summary: %d %v", st, upd)
		}
		if st, _ := b.Do(t, "PATCH", path+"/"+id, ten.Token, map[string]any{"title": ""}); st != 400 {
			t.Errorf("empty title: %d", st)
		}
		if st, _ := b.Do(t, "PATCH", path+"/"+id, ten.Token, map[string]any{"content": strings.Repeat("c", 50001)}); st != 400 {
			t.Errorf("content too long: %d", st)
		}
		if st, body := b.Do(t, "GET", path+"/not-a-uuid", ten.Token, nil); st != 404 || body["error"] != "Corpus entry not found" {
			t.Errorf("bad id: %d %v", st, body)
		}
		if st, _ := b.Do(t, "GET", "/tenants/"+other.Slug+"/corpus/"+id, other.Token, nil); st != 404 {
			t.Errorf("other tenant reads entry: %d", st)
		}
		if st, _ := b.Do(t, "PATCH", "/tenants/"+other.Slug+"/corpus/"+id, other.Token, map[string]any{"title": "x"}); st != 404 {
			t.Errorf("other tenant updates entry: %d", st)
		}
		if st, _ := b.Do(t, "DELETE", "/tenants/"+other.Slug+"/corpus/"+id, other.Token, nil); st != 404 {
			t.Errorf("other tenant deletes entry: %d", st)
		}
		st, del := b.Do(t, "DELETE", path+"/"+id, ten.Token, nil)
		if st != 200 || del["deleted"] != true || del["id"] != id {
			t.Errorf("delete: %d %v", st, del)
		}
		if st, _ := b.Do(t, "GET", path+"/"+id, ten.Token, nil); st != 404 {
			t.Errorf("after delete: %d", st)
		}
	})

	t.Run("Bulk", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/corpus/bulk"
		entries := func(n int, prefix string) []map[string]any {
			out := []map[string]any{}
			for i := 0; i < n; i++ {
				out = append(out, map[string]any{"externalId": fmt.Sprintf("%s-%d", prefix, i), "title": "T", "content": "C"})
			}
			return out
		}
		for _, n := range []int{0, 51} {
			if st, body := b.Do(t, "POST", path, ten.Token, map[string]any{"entries": entries(n, "x")}); st != 400 {
				t.Errorf("%d entries: %d %v", n, st, body)
			}
		}
		if st, _ := b.Do(t, "POST", path, ten.Token, map[string]any{"entries": "nope"}); st != 400 {
			t.Errorf("entries not an array: %d", st)
		}
		st, body := b.Do(t, "POST", path, ten.Token, map[string]any{"entries": entries(50, "a")})
		if st != 200 || body["created"] != float64(50) {
			t.Fatalf("50 entries: %d %v", st, body)
		}
		mixed := entries(2, "a") // unchanged: skipped
		mixed = append(mixed,
			map[string]any{"externalId": "a-2", "title": "T2", "content": "C"},                 // updated
			map[string]any{"externalId": "new-1", "title": "N", "content": "C", "priority": 3}, // created
		)
		bad := append(slices.Clone(mixed),
			map[string]any{"title": "no id", "content": "C"},                                         // error
			map[string]any{"externalId": "bad-1", "title": strings.Repeat("t", 256), "content": "C"}, // error
			map[string]any{"externalId": "new-1", "title": "dup", "content": "C"},                    // error: twice
		)
		// A request with bad items writes its good ones and lists the bad
		// ones by index; the unchanged ones are skipped.
		st, body = b.Do(t, "POST", path, ten.Token, map[string]any{"entries": bad})
		if st != 200 || body["created"] != float64(1) || body["updated"] != float64(1) || body["skipped"] != float64(2) {
			t.Fatalf("mixed with errors: %d %v", st, body)
		}
		errs := body["errors"].([]any)
		if len(errs) != 3 {
			t.Fatalf("errors = %v", errs)
		}
		for i, want := range []struct {
			index  float64
			extID  string
			reason string
		}{{4, "", "externalId is required"}, {5, "bad-1", "title"}, {6, "new-1", "appears twice"}} {
			e := errs[i].(map[string]any)
			if e["index"] != want.index || e["externalId"] != want.extID || !strings.Contains(e["reason"].(string), want.reason) {
				t.Errorf("error %d = %v, want index %v, externalId %q, reason with %q", i, e, want.index, want.extID, want.reason)
			}
		}
		results := body["results"].([]any)
		if r := results[0].(map[string]any); r["status"] != "skipped" || r["reason"] != "unchanged" || r["id"] == nil {
			t.Errorf("unchanged item: %v", r)
		}
		if r := results[3].(map[string]any); r["status"] != "created" || r["id"] == nil {
			t.Errorf("good item of a request with bad ones: %v", r)
		}
		if r := results[5].(map[string]any); r["status"] != "error" || r["externalId"] != "bad-1" || r["id"] != nil {
			t.Errorf("bad item: %v", r)
		}
		content := func(extID string) string {
			var c string
			_ = b.DB.Pool().QueryRow(t.Context(), `SELECT content FROM corpus_entries WHERE tenant_id = $1 AND external_id = $2`, ten.ID, extID).Scan(&c)
			return c
		}
		var title string
		_ = b.DB.Pool().QueryRow(t.Context(), `SELECT title FROM corpus_entries WHERE tenant_id = $1 AND external_id = 'new-1'`, ten.ID).Scan(&title)
		if n := webtest.CountCorpus(t, b, ten.ID); n != 51 || title != "N" {
			t.Errorf("after a request with bad items: %d entries, new-1 titled %q; want 51 and the first new-1", n, title)
		}
		// The fourth item bad: the first three are written.
		four := entries(4, "four")
		four[3]["content"] = ""
		st, body = b.Do(t, "POST", path, ten.Token, map[string]any{"entries": four})
		if errs := body["errors"].([]any); st != 200 || body["created"] != float64(3) || len(errs) != 1 || errs[0].(map[string]any)["externalId"] != "four-3" || errs[0].(map[string]any)["index"] != float64(3) {
			t.Errorf("fourth item bad: %d %v", st, body)
		}
		if n := webtest.CountCorpus(t, b, ten.ID); n != 54 || content("four-2") != "C" || content("four-3") != "" {
			t.Errorf("%d entries after the fourth item was refused, want 54 with four-0 to four-2", n)
		}
		// Every item bad: nothing written, every one listed.
		allBad := []any{
			map[string]any{"externalId": "x-1", "title": "", "content": "C"},
			"not an object",
			nil,
			map[string]any{"externalId": "x-2", "title": "T", "content": "C", "priority": "high"},
			map[string]any{"externalId": 7, "title": "T", "content": "C"},
		}
		st, body = b.Do(t, "POST", path, ten.Token, map[string]any{"entries": allBad})
		if st != 200 || body["created"] != float64(0) || body["updated"] != float64(0) || body["skipped"] != float64(0) || len(body["errors"].([]any)) != 5 {
			t.Fatalf("every item bad: %d %v", st, body)
		}
		for i, e := range body["errors"].([]any) {
			if e.(map[string]any)["index"] != float64(i) || e.(map[string]any)["reason"] == "" {
				t.Errorf("error %d = %v", i, e)
			}
		}
		if n := webtest.CountCorpus(t, b, ten.ID); n != 54 {
			t.Errorf("%d entries after a request of bad items, want 54", n)
		}

		// The good items of the mixed request again: all as they are now.
		st, body = b.Do(t, "POST", path, ten.Token, map[string]any{"entries": mixed})
		if st != 200 || body["created"] != float64(0) || body["updated"] != float64(0) || body["skipped"] != float64(4) || len(body["errors"].([]any)) != 0 {
			t.Fatalf("mixed: %d %v", st, body)
		}
		results = body["results"].([]any)
		if results[0].(map[string]any)["status"] != "skipped" || results[0].(map[string]any)["reason"] != "unchanged" || results[3].(map[string]any)["status"] != "skipped" {
			t.Errorf("results: %v", results)
		}
		if n := webtest.CountCorpus(t, b, ten.ID); n != 54 {
			t.Errorf("%d entries stored, want 54", n)
		}
	})

	t.Run("CorpusLimitGives429", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "free") // 50 entries
		entries := []map[string]any{}
		for i := 0; i < 49; i++ {
			entries = append(entries, map[string]any{"externalId": fmt.Sprint(i), "title": "T", "content": "C"})
		}
		if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/corpus/bulk", ten.Token, map[string]any{"entries": entries}); st != 200 || body["created"] != float64(49) {
			t.Fatalf("fill: %d %v", st, body)
		}
		// 49 + 2 new: over the limit, nothing written.
		two := []map[string]any{{"externalId": "n1", "title": "T", "content": "C"}, {"externalId": "n2", "title": "T", "content": "C"}}
		st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/corpus/bulk", ten.Token, map[string]any{"entries": two})
		if d, _ := body["details"].(map[string]any); st != http.StatusTooManyRequests || d["current"] != float64(49) || d["adding"] != float64(2) || d["limit"] != float64(50) {
			t.Errorf("bulk over the limit: %d %v", st, body)
		}
		if n := webtest.CountCorpus(t, b, ten.ID); n != 49 {
			t.Errorf("%d entries after a refused bulk, want 49", n)
		}
		// An update, one new and one refused: exactly at the limit (neither
		// the update nor the refused item is counted).
		upd := []map[string]any{{"externalId": "0", "title": "T", "content": "changed"}, {"externalId": "n1", "title": "T", "content": "C"}, {"externalId": "n2", "title": "", "content": "C"}}
		if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/corpus/bulk", ten.Token, map[string]any{"entries": upd}); st != 200 || body["created"] != float64(1) || body["updated"] != float64(1) || len(body["errors"].([]any)) != 1 {
			t.Errorf("bulk to the limit: %d %v", st, body)
		}
		st, body = b.Do(t, "POST", "/tenants/"+ten.Slug+"/corpus", ten.Token, map[string]any{"title": "one more", "content": "c"})
		if st != http.StatusTooManyRequests || !strings.Contains(body["error"].(string), "limit") {
			t.Errorf("over limit: %d %v", st, body)
		}
		st, body = b.Do(t, "POST", "/tenants/"+ten.Slug+"/corpus", ten.Token, map[string]any{"title": "update", "content": "c", "externalId": "0"})
		if st != 200 {
			t.Errorf("update at the limit: %d %v", st, body)
		}
	})

	t.Run("CSVImportLimit", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "free") // 50 entries
		csv := func(from, to int) string {
			var sb strings.Builder
			sb.WriteString("externalId,title,content\n")
			for i := from; i < to; i++ {
				fmt.Fprintf(&sb, "e%d,Title %d,Content %d\n", i, i, i)
			}
			return sb.String()
		}
		path := "/tenants/" + ten.Slug + "/corpus/import"
		if st, body := b.Upload(t, path, ten.Token, "file", csv(0, 51)); st != http.StatusTooManyRequests || body["details"].(map[string]any)["adding"] != float64(51) {
			t.Errorf("51 rows on a 50-entry plan: %d %v", st, body)
		}
		if n := webtest.CountCorpus(t, b, ten.ID); n != 0 {
			t.Errorf("%d entries after a refused import, want 0", n)
		}
		if st, body := b.Upload(t, path, ten.Token, "file", csv(0, 50)); st != 200 || body["imported"] != float64(50) {
			t.Fatalf("50 rows on a 50-entry plan: %d %v", st, body)
		}
		// At the limit, the same rows again change nothing: skipped, not
		// refused; one new row is refused.
		if st, body := b.Upload(t, path, ten.Token, "file", csv(0, 50)); st != 200 || body["imported"] != float64(0) || body["skipped"] != float64(50) {
			t.Errorf("re-import at the limit: %d %v", st, body)
		}
		// So are rows without externalId that are already entries; a bad
		// line is not counted either.
		noID := strings.ReplaceAll(csv(0, 50), "\ne", "\n") + ",no title\n"
		noID = strings.Replace(noID, "externalId,", "ignored,", 1)
		if st, body := b.Upload(t, path, ten.Token, "file", noID); st != 200 || body["imported"] != float64(0) || body["skipped"] != float64(50) || len(body["errors"].([]any)) != 1 {
			t.Errorf("re-import without externalId at the limit: %d %v", st, body)
		}
		if st, body := b.Upload(t, path, ten.Token, "file", csv(1, 51)); st != http.StatusTooManyRequests || body["details"].(map[string]any)["current"] != float64(50) {
			t.Errorf("one new row at the limit: %d %v", st, body)
		}
		if n := webtest.CountCorpus(t, b, ten.ID); n != 50 {
			t.Errorf("%d entries, want 50", n)
		}
	})

	t.Run("CSVImport", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/corpus/import"
		b.Do(t, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token, map[string]any{"name": "Pros", "systemPrompt": "p"})
		good := "\xef\xbb\xbftitle,content,segment,priority\n" +
			"Hours,\"Open 9-5, Monday to Friday\",,7\n" +
			"\"Multi\",\"line one\nline two\",pros,\n"
		csv := good +
			",missing title,,\n" +
			"Bad priority,x,,high\n" +
			"Unknown segment,x,nope,1\n"
		// Bad lines are reported by the file's line (the header is line 1,
		// the quoted line break counts) and left out; the good ones go in.
		st, body := b.Upload(t, path, ten.Token, "file", csv)
		if st != 200 || body["imported"] != float64(2) || body["skipped"] != float64(0) {
			t.Fatalf("import: %d %v", st, body)
		}
		errs := body["errors"].([]any)
		if len(errs) != 3 {
			t.Fatalf("errors = %v", errs)
		}
		lines := []float64{5, 6, 7}
		for i, e := range errs {
			if e.(map[string]any)["line"] != lines[i] {
				t.Errorf("error %d line = %v, want %v (%v)", i, e.(map[string]any)["line"], lines[i], e)
			}
		}
		if n := webtest.CountCorpus(t, b, ten.ID); n != 2 {
			t.Fatalf("%d entries written by a file with 2 good lines and 3 bad", n)
		}
		// The good lines again, without externalId: already there, skipped.
		st, body = b.Upload(t, path, ten.Token, "file", good)
		if st != 200 || body["imported"] != float64(0) || body["skipped"] != float64(2) || len(body["errors"].([]any)) != 0 {
			t.Fatalf("good file: %d %v", st, body)
		}
		_, list := b.Do(t, "GET", "/tenants/"+ten.Slug+"/corpus?segmentSlug=pros", ten.Token, nil)
		if c := list["corpus"].([]any); len(c) != 1 || c[0].(map[string]any)["content"] != "line one\nline two" {
			t.Errorf("multi-line entry: %v", list)
		}
		_, list = b.Do(t, "GET", "/tenants/"+ten.Slug+"/corpus?search=hours", ten.Token, nil)
		if c := list["corpus"].([]any); len(c) != 1 || c[0].(map[string]any)["content"] != "Open 9-5, Monday to Friday" || c[0].(map[string]any)["priority"] != float64(7) || c[0].(map[string]any)["source"] != "csv" {
			t.Errorf("quoted comma entry: %v", list)
		}
		if st, body := b.Upload(t, "/tenants/"+ten.Slug+"/corpus/import", ten.Token, "other", csv); st != 400 {
			t.Errorf("no file part: %d %v", st, body)
		}
		if st, body := b.Upload(t, "/tenants/"+ten.Slug+"/corpus/import", ten.Token, "file", "name,text\na,b\n"); st != 400 || !strings.Contains(body["error"].(string), "title") {
			t.Errorf("wrong header: %d %v", st, body)
		}
		big := "title,content\n" + strings.Repeat("t,"+strings.Repeat("c", 1000)+"\n", 5300)
		if st, body := b.Upload(t, "/tenants/"+ten.Slug+"/corpus/import", ten.Token, "file", big); st != http.StatusRequestEntityTooLarge || !strings.Contains(body["error"].(string), "MiB") {
			t.Errorf("too large: %d %v", st, body)
		}
		// Files that cannot be read: 400 naming the line, nothing written.
		for name, tc := range map[string]struct {
			csv  string
			line string
		}{
			"unclosed quote": {"title,content\nA,a\nB,b\nC,\"never closed\nD,d\n", "line 4"},
			"bare quote":     {"title,content\nA,a\nB,b\"c\n", "line 3"},
			"NUL byte":       {"title,content\nA,a\nB,b\x00\n", "line 3"},
			"invalid UTF-8":  {"title,content\nA,a\nB,\xff\xfe\n", "line 3"},
			"header quote":   {"\"title,content\n", "line 1"},
		} {
			st, body := b.Upload(t, path, ten.Token, "file", tc.csv)
			if msg, _ := body["error"].(string); st != 400 || !strings.Contains(msg, tc.line) {
				t.Errorf("%s: %d %v, want 400 naming %s", name, st, body, tc.line)
			}
		}
		if n := webtest.CountCorpus(t, b, ten.ID); n != 2 {
			t.Errorf("%d entries after refused files, want 2", n)
		}
	})

	t.Run("CSVImportPartial", func(t *testing.T) {
		t.Parallel()
		ten := b.NewTenant(t, "scale")
		path := "/tenants/" + ten.Slug + "/corpus/import"
		// Line 4 bad: lines 2, 3 and 5 are written.
		bad := "externalId,title,content\ne1,One,first\ne2,Two,second\ne3,,third\ne4,Four,fourth\n"
		st, body := b.Upload(t, path, ten.Token, "file", bad)
		if errs := body["errors"].([]any); st != 200 || body["imported"] != float64(3) || len(errs) != 1 || errs[0].(map[string]any)["line"] != float64(4) {
			t.Fatalf("line 4 bad: %d %v", st, body)
		}
		if n := webtest.CountCorpus(t, b, ten.ID); n != 3 {
			t.Fatalf("%d entries written by a file with 3 good lines and a bad line 4", n)
		}
		// The retry, fixed: the line fixed is imported, the others skipped.
		fixed := strings.Replace(bad, "e3,,third", "e3,Three,third", 1)
		if st, body := b.Upload(t, path, ten.Token, "file", fixed); st != 200 || body["imported"] != float64(1) || body["skipped"] != float64(3) {
			t.Fatalf("fixed file: %d %v", st, body)
		}
		stamps := func() map[string]time.Time {
			out := map[string]time.Time{}
			rows, err := b.DB.Pool().Query(t.Context(), `SELECT external_id, updated_at FROM corpus_entries WHERE tenant_id = $1`, ten.ID)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			for rows.Next() {
				var id string
				var at time.Time
				if err := rows.Scan(&id, &at); err != nil {
					t.Fatal(err)
				}
				out[id] = at
			}
			return out
		}
		before := stamps()
		// The same file again: nothing changes, no copies.
		if st, body := b.Upload(t, path, ten.Token, "file", fixed); st != 200 || body["imported"] != float64(0) || body["skipped"] != float64(4) {
			t.Fatalf("same file again: %d %v", st, body)
		}
		if after := stamps(); len(after) != 4 || !maps.Equal(before, after) {
			t.Errorf("re-import changed entries: %v -> %v", before, after)
		}
		// A changed line updates its entry; a new one is added.
		changed := strings.Replace(fixed, "e2,Two,second", "e2,Two,second edition", 1) + "e5,Five,fifth\n"
		if st, body := b.Upload(t, path, ten.Token, "file", changed); st != 200 || body["imported"] != float64(2) || body["skipped"] != float64(3) {
			t.Fatalf("changed file: %d %v", st, body)
		}
		after := stamps()
		if len(after) != 5 || !after["e1"].Equal(before["e1"]) || after["e2"].Equal(before["e2"]) {
			t.Errorf("after the changed file: %v (before %v)", after, before)
		}
		var content string
		_ = b.DB.Pool().QueryRow(t.Context(), `SELECT content FROM corpus_entries WHERE tenant_id = $1 AND external_id = 'e2'`, ten.ID).Scan(&content)
		if content != "second edition" {
			t.Errorf("e2 content = %q", content)
		}
		// The entries can be found by the words of the file (search document filled).
		_, list := b.Do(t, "GET", "/tenants/"+ten.Slug+"/corpus?search=edition", ten.Token, nil)
		if c := list["corpus"].([]any); len(c) != 1 || c[0].(map[string]any)["externalId"] != "e2" {
			t.Errorf("search after import: %v", list)
		}
		// An externalId twice in one file: the second line is bad, the first imported.
		st, body = b.Upload(t, path, ten.Token, "file", "external_id,title,content\nx1,A,a\nx1,B,b\n")
		if errs := body["errors"].([]any); st != 200 || body["imported"] != float64(1) || len(errs) != 1 || errs[0].(map[string]any)["line"] != float64(3) || !strings.Contains(errs[0].(map[string]any)["error"].(string), "line 2") {
			t.Errorf("externalId twice: %d %v", st, body)
		}
		// Many bad lines: the first 100 are listed, the others counted.
		many := "title,content\n" + strings.Repeat(",no title\n", 150)
		st, body = b.Upload(t, path, ten.Token, "file", many)
		if st != 200 || body["imported"] != float64(0) || len(body["errors"].([]any)) != 100 || body["errorsOmitted"] != float64(50) {
			t.Errorf("150 bad lines: %d errors, omitted %v", len(body["errors"].([]any)), body["errorsOmitted"])
		}
		if n := webtest.CountCorpus(t, b, ten.ID); n != 6 {
			t.Errorf("%d entries, want 6", n)
		}
	})

	// The issue: a second import of the same CSV file, without externalId,
	// doubled every entry and the bot quoted both. A line whose title and
	// content are an entry's of the tenant (or an earlier line's) is skipped;
	// another tenant's entries are never compared.
	t.Run("CSVReimportWithoutExternalID", func(t *testing.T) {
		t.Parallel()
		ten, other := b.NewTenant(t, "scale"), b.NewTenant(t, "scale")
		file := "title,content,priority\n" +
			"Opening hours,\"Monday to Friday,\nnine to five\",3\n" + // lines 2-3
			"Refunds,Within 30 days.,\n" + // line 4
			"Refunds,Within 30 days.,9\n" + // line 5: line 4 again
			",no title,\n" + // line 6: bad
			"Shipping,Two days.,\n" // line 7
		st, body := b.Upload(t, "/tenants/"+other.Slug+"/corpus/import", other.Token, "file", file)
		if st != 200 || body["imported"] != float64(3) || body["skipped"] != float64(1) {
			t.Fatalf("the other tenant's import: %d %v", st, body)
		}
		path := "/tenants/" + ten.Slug + "/corpus/import"
		for i, want := range []struct{ imported, skipped float64 }{{3, 1}, {0, 4}} {
			st, body = b.Upload(t, path, ten.Token, "file", file)
			errs := body["errors"].([]any)
			if st != 200 || body["imported"] != want.imported || body["skipped"] != want.skipped || len(errs) != 1 || errs[0].(map[string]any)["line"] != float64(6) {
				t.Errorf("import %d: %d %v, want %v imported, %v skipped, line 6 refused", i+1, st, body, want.imported, want.skipped)
			}
		}
		if n := webtest.CountCorpus(t, b, ten.ID); n != 3 {
			t.Errorf("%d entries after importing the file twice, want 3", n)
		}
		if n := webtest.CountCorpus(t, b, other.ID); n != 3 {
			t.Errorf("the other tenant has %d entries, want 3", n)
		}
		// An entry made another way counts as well; a changed content is new.
		if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/corpus", ten.Token, map[string]any{"title": "Payments", "content": "Cards."}); st != 201 {
			t.Fatalf("create: %d %v", st, body)
		}
		st, body = b.Upload(t, path, ten.Token, "file", "title,content\nPayments,Cards.\n Refunds ,Within 30 days.\nRefunds,Within 40 days.\n")
		if st != 200 || body["imported"] != float64(1) || body["skipped"] != float64(2) {
			t.Errorf("against entries made by the API: %d %v", st, body)
		}
		if n := webtest.CountCorpus(t, b, ten.ID); n != 5 {
			t.Errorf("%d entries, want 5", n)
		}
	})
}

func manyTags(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("tag%d", i)
	}
	return out
}

// TestCorpusLifecycle walks the corpus through every operation: create and
// upsert, invalid bodies, list filters, partial updates, bulk, CSV import,
// delete, 404, 403, 413 and the plan's limit; each request is also checked
// to be valid, or refused, by openapi.json.
func TestCorpusLifecycle(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	c := &webtest.OpenAPIChecker{T: t, B: b}
	ten := b.NewTenant(t, "scale")
	base := "/tenants/" + ten.Slug + "/corpus"
	if status, body := c.Exchange("POST", "/tenants/"+ten.Slug+"/segments", ten.Token, map[string]any{"name": "Pros", "systemPrompt": "p"}, true); status != http.StatusCreated {
		t.Fatalf("POST segment: %d %v", status, body)
	}
	entry := func(body any) map[string]any {
		m, _ := body.(map[string]any)
		e, _ := m["corpus"].(map[string]any)
		return e
	}

	// Create: defaults, then every member.
	status, body := c.Exchange("POST", base, ten.Token, map[string]any{"title": " Pricing ", "content": "Plans cost 10 EUR."}, true)
	if e := entry(body); status != http.StatusCreated || body.(map[string]any)["created"] != true || e["title"] != "Pricing" || e["priority"] != float64(5) || e["segment"] != nil {
		t.Fatalf("POST corpus: %d %v", status, body)
	}
	pricingID := entry(body)["id"].(string)

	full := map[string]any{
		"title": "Opening hours", "content": "Open Monday to Friday.", "summary": "Weekdays.", "priority": 0, "isActive": false,
		"externalId": "faq-hours", "source": "helpdesk", "sourceUrl": "https://help.example.com/hours", "locale": "FR-ca",
		"tags": []string{"hours", "hours", " faq "}, "segmentSlug": "pros",
	}
	status, body = c.Exchange("POST", base, ten.Token, full, true)
	e := entry(body)
	if status != http.StatusCreated || e["segment"].(map[string]any)["slug"] != "pros" || len(e["tags"].([]any)) != 2 || e["isActive"] != false {
		t.Fatalf("POST full corpus: %d %v", status, body)
	}
	if _, ok := e["locale"]; ok {
		t.Errorf("POST full corpus: locale is write-only, yet returned: %v", e)
	}
	hoursID := e["id"].(string)

	// With a known externalId: an upsert, 200 created:false; unchanged writes nothing.
	full["content"] = "Open Monday to Saturday."
	status, body = c.Exchange("POST", base, ten.Token, full, true)
	if e := entry(body); status != http.StatusOK || body.(map[string]any)["created"] != false || e["id"] != hoursID || e["content"] != full["content"] {
		t.Errorf("POST upsert: %d %v", status, body)
	}
	updatedAt := entry(body)["updatedAt"]
	status, body = c.Exchange("POST", base, ten.Token, map[string]any{"externalId": "faq-hours", "title": "Opening hours", "content": full["content"]}, true)
	if e := entry(body); status != http.StatusOK || body.(map[string]any)["created"] != false || e["updatedAt"] != updatedAt || e["summary"] != "Weekdays." {
		t.Errorf("POST unchanged upsert: %d %v", status, body)
	}
	status, body = c.Exchange("POST", base, ten.Token, map[string]any{"title": "Variant", "content": "c", "segment": "pros"}, true)
	if status != http.StatusCreated || entry(body)["segment"].(map[string]any)["name"] != "Pros" {
		t.Errorf("POST with segment: %d %v", status, body)
	}
	variantID := entry(body)["id"].(string)

	// Invalid bodies.
	invalid := map[string]any{
		"title": " ", "content": "", "summary": strings.Repeat("s", 501), "priority": 101, "isActive": nil,
		"externalId": strings.Repeat("x", 256), "source": strings.Repeat("s", 51), "sourceUrl": "not a url",
		"locale": "english", "tags": strings.Fields(strings.Repeat("tag ", 20) + "a b c d e f g h i j k l m n o p q r s t u"),
	}
	status, body = c.Exchange("POST", base, ten.Token, invalid, false)
	if status != http.StatusBadRequest {
		t.Fatalf("POST invalid corpus: %d %v", status, body)
	}
	for field := range invalid {
		if _, ok := webtest.ErrorDetails(body)[field]; !ok {
			t.Errorf("POST invalid corpus: no details for %s: %v", field, body)
		}
	}
	for _, field := range webtest.SortedKeys(invalid) {
		req := map[string]any{"title": "t", "content": "c", field: invalid[field]}
		if status, body = c.Exchange("POST", base, ten.Token, req, false); status != http.StatusBadRequest {
			t.Errorf("POST %s=%v: %d %v", field, invalid[field], status, body)
		}
	}
	for what, req := range map[string]map[string]any{
		"title256": {"title": strings.Repeat("t", 256), "content": "c"},
		"tag51":    {"title": "t", "content": "c", "tags": []string{strings.Repeat("t", 51)}},
		"priority": {"title": "t", "content": "c", "priority": -1},
		"noTitle":  {"content": "c"},
		"ftp":      {"title": "t", "content": "c", "sourceUrl": "ftp://example.com/x"},
	} {
		if status, body = c.Exchange("POST", base, ten.Token, req, false); status != http.StatusBadRequest {
			t.Errorf("POST %s: %d %v", what, status, body)
		}
	}
	if status, body = c.Exchange("POST", base, ten.Token, map[string]any{"title": "t", "content": "c", "segmentSlug": "nope"}, true); status != http.StatusBadRequest || webtest.ErrorDetails(body)["segmentSlug"] == nil {
		t.Errorf("POST unknown segment: %d %v", status, body)
	}

	// List, filter, search, paginate.
	status, body = c.Exchange("GET", base, ten.Token, nil, true)
	if status != http.StatusOK || len(body.(map[string]any)["corpus"].([]any)) != 3 {
		t.Fatalf("GET corpus: %d %v", status, body)
	}
	for _, q := range []string{"?segmentSlug=pros&page=2&limit=1", "?segment=pros&page=2&limit=1", "?segmentSlug=&segment=pros&limit=1&page=2"} {
		status, body = c.Exchange("GET", base+q, ten.Token, nil, true)
		p, _ := body.(map[string]any)["pagination"].(map[string]any)
		if status != http.StatusOK || p["total"] != float64(2) || p["totalPages"] != float64(2) || p["page"] != float64(2) || len(body.(map[string]any)["corpus"].([]any)) != 1 {
			t.Errorf("GET corpus%s: %d %v", q, status, body)
		}
	}
	status, body = c.Exchange("GET", base+"?search=saturdays", ten.Token, nil, true)
	if status != http.StatusOK || body.(map[string]any)["pagination"].(map[string]any)["total"] != float64(1) {
		t.Errorf("GET corpus?search: %d %v", status, body)
	}
	status, body = c.Exchange("GET", base+"?page=9", ten.Token, nil, true)
	if status != http.StatusOK || len(body.(map[string]any)["corpus"].([]any)) != 0 {
		t.Errorf("GET corpus past the last page: %d %v", status, body)
	}
	for _, q := range []string{"?limit=101", "?limit=0", "?page=0", "?page=x", "?search=" + strings.Repeat("s", 201)} {
		if status, body = c.Exchange("GET", base+q, ten.Token, nil, false); status != http.StatusBadRequest {
			t.Errorf("GET corpus%s: %d %v", q, status, body)
		}
	}
	if status, body = c.Exchange("GET", base+"?segmentSlug=nope", ten.Token, nil, true); status != http.StatusBadRequest || webtest.ErrorDetails(body)["segmentSlug"] == nil {
		t.Errorf("GET corpus of an unknown segment: %d %v", status, body)
	}

	// Read, update (PUT and PATCH both partial), conflicts.
	status, body = c.Exchange("GET", base+"/"+hoursID, ten.Token, nil, true)
	if status != http.StatusOK || entry(body)["id"] != hoursID {
		t.Errorf("GET entry: %d %v", status, body)
	}
	status, body = c.Exchange("PATCH", base+"/"+hoursID, ten.Token, map[string]any{"priority": 9, "segmentSlug": nil, "locale": "", "id": "ignored"}, true)
	if e := entry(body); status != http.StatusOK || e["priority"] != float64(9) || e["segment"] != nil || e["title"] != "Opening hours" {
		t.Errorf("PATCH entry: %d %v", status, body)
	}
	status, body = c.Exchange("PUT", base+"/"+hoursID, ten.Token, map[string]any{"title": " Hours ", "tags": nil, "summary": "", "sourceUrl": nil, "segment": "pros"}, true)
	if e := entry(body); status != http.StatusOK || e["title"] != "Hours" || len(e["tags"].([]any)) != 0 || e["summary"] != nil || e["sourceUrl"] != nil || e["segment"] == nil {
		t.Errorf("PUT entry: %d %v", status, body)
	}
	if status, body = c.Exchange("PATCH", base+"/"+pricingID, ten.Token, map[string]any{"externalId": "faq-hours"}, true); status != http.StatusConflict || webtest.ErrorDetails(body)["externalId"] == nil {
		t.Errorf("PATCH taken externalId: %d %v", status, body)
	}
	if status, body = c.Exchange("PUT", base+"/"+pricingID, ten.Token, map[string]any{"title": nil, "content": " ", "priority": "high"}, false); status != http.StatusBadRequest || len(webtest.ErrorDetails(body)) != 3 {
		t.Errorf("PUT invalid entry: %d %v", status, body)
	}

	// Bulk: created, then skipped/updated/created, then per-item errors.
	bulk := base + "/bulk"
	items := []any{
		map[string]any{"externalId": "b1", "title": "B1", "content": "one"},
		map[string]any{"externalId": "b2", "title": "B2", "content": "two", "segmentSlug": "pros", "priority": 3},
	}
	status, body = c.Exchange("POST", bulk, ten.Token, map[string]any{"entries": items}, true)
	if got, _ := body.(map[string]any); status != http.StatusOK || got["created"] != float64(2) {
		t.Fatalf("POST bulk: %d %v", status, body)
	}
	items[1] = map[string]any{"externalId": "b2", "title": "B2", "content": "two, changed"}
	items = append(items, map[string]any{"externalId": "b3", "title": "B3", "content": "three"})
	status, body = c.Exchange("POST", bulk, ten.Token, map[string]any{"entries": items}, true)
	got, _ := body.(map[string]any)
	if status != http.StatusOK || got["created"] != float64(1) || got["updated"] != float64(1) || got["skipped"] != float64(1) || len(got["errors"].([]any)) != 0 {
		t.Errorf("POST bulk again: %d %v", status, body)
	}
	if r := got["results"].([]any); len(r) != 3 || r[0].(map[string]any)["status"] != "skipped" || r[0].(map[string]any)["reason"] != "unchanged" || r[1].(map[string]any)["status"] != "updated" {
		t.Errorf("POST bulk results: %v", r)
	}
	status, body = c.Exchange("POST", bulk, ten.Token, map[string]any{"entries": []any{
		map[string]any{"title": "no id", "content": "c"},
		map[string]any{"externalId": "b4", "title": "", "content": "c"},
		"not an object",
		map[string]any{"externalId": "b5", "title": "ok", "content": "c"},
	}}, false)
	got, _ = body.(map[string]any)
	if status != http.StatusOK || got["created"] != float64(1) || got["skipped"] != float64(0) || len(got["errors"].([]any)) != 3 {
		t.Errorf("POST bulk with bad items: %d %v", status, body)
	}
	for _, req := range []any{map[string]any{"entries": []any{}}, map[string]any{"entries": "x"}, map[string]any{}, "not an object"} {
		if status, body = c.Exchange("POST", bulk, ten.Token, req, false); status != http.StatusBadRequest {
			t.Errorf("POST bulk %v: %d %v", req, status, body)
		}
	}
	fiftyOne := []any{}
	for i := 0; i < 51; i++ {
		fiftyOne = append(fiftyOne, map[string]any{"externalId": fmt.Sprint(i), "title": "t", "content": "c"})
	}
	if status, body = c.Exchange("POST", bulk, ten.Token, map[string]any{"entries": fiftyOne}, false); status != http.StatusBadRequest {
		t.Errorf("POST bulk of 51: %d %v", status, body)
	}

	// CSV import, as multipart/form-data.
	imp := base + "/import"
	csv := "\xef\xbb\xbfTitle,content,segment,priority\n" +
		"Hours,\"Open 9-5, Monday to Friday\",,7\n" +
		"\"Multi\",\"line one\nline two\",pros,\n" +
		",missing title,,\n" +
		"Bad priority,x,,high\n"
	ct, raw := webtest.MultipartFile("file", "corpus.csv", csv)
	status, body = c.ExchangeRaw("POST", imp, ten.Token, ct, raw, true)
	got, _ = body.(map[string]any)
	if status != http.StatusOK || got["imported"] != float64(2) || got["skipped"] != float64(0) || len(got["errors"].([]any)) != 2 || got["errors"].([]any)[0].(map[string]any)["line"] != float64(5) {
		t.Errorf("POST import: %d %v", status, body)
	}
	ct, raw = webtest.MultipartFile("file", "corpus.csv", "title,content\nA,\"never closed\n")
	if status, body = c.ExchangeRaw("POST", imp, ten.Token, ct, raw, true); status != http.StatusBadRequest || webtest.ErrorDetails(body)["file"] == nil {
		t.Errorf("POST import with an unclosed quote: %d %v", status, body)
	}
	ct, raw = webtest.MultipartFile("other", "corpus.csv", csv)
	if status, body = c.ExchangeRaw("POST", imp, ten.Token, ct, raw, false); status != http.StatusBadRequest || webtest.ErrorDetails(body)["file"] == nil {
		t.Errorf("POST import without a file part: %d %v", status, body)
	}
	if status, body = c.Exchange("POST", imp, ten.Token, map[string]any{"file": "title,content"}, false); status != http.StatusBadRequest {
		t.Errorf("POST import as JSON: %d %v", status, body)
	}
	ct, raw = webtest.MultipartFile("file", "corpus.csv", "name,text\na,b\n")
	if status, body = c.ExchangeRaw("POST", imp, ten.Token, ct, raw, true); status != http.StatusBadRequest {
		t.Errorf("POST import with a wrong header: %d %v", status, body)
	}
	ct, raw = webtest.MultipartFile("file", "corpus.csv", "title,content\n"+strings.Repeat("t,"+strings.Repeat("c", 1000)+"\n", 5300))
	if status, body = c.ExchangeRaw("POST", imp, ten.Token, ct, raw, true); status != http.StatusRequestEntityTooLarge {
		t.Errorf("POST import over 5 MiB: %d %v", status, body)
	}

	// Delete, 404, 403, 413.
	status, body = c.Exchange("DELETE", base+"/"+variantID, ten.Token, nil, true)
	if got, _ := body.(map[string]any); status != http.StatusOK || got["deleted"] != true || got["id"] != variantID {
		t.Errorf("DELETE entry: %d %v", status, body)
	}
	for _, method := range []string{"GET", "DELETE", "PATCH", "PUT"} {
		var req any
		if method == "PATCH" || method == "PUT" {
			req = map[string]any{"priority": 1}
		}
		status, body = c.Exchange(method, base+"/"+variantID, ten.Token, req, true)
		if status != http.StatusNotFound || body.(map[string]any)["error"] != "Corpus entry not found" {
			t.Errorf("%s deleted entry: %d %v", method, status, body)
		}
	}
	other := b.NewTenant(t, "scale")
	if status, body = c.Exchange("GET", "/tenants/"+other.Slug+"/corpus/"+hoursID, other.Token, nil, true); status != http.StatusNotFound {
		t.Errorf("GET another tenant's entry: %d %v", status, body)
	}
	if status, body = c.Exchange("GET", base, other.Token, nil, true); status != http.StatusNotFound || body.(map[string]any)["error"] != "Tenant not found" {
		t.Errorf("GET corpus with another tenant's token: %d %v", status, body)
	}
	readOnly := b.Token(t, ten.ID, auth.ScopeCorpusRead)
	if status, body = c.Exchange("POST", bulk, readOnly, map[string]any{"entries": items}, true); status != http.StatusForbidden || body.(map[string]any)["error"] != "Missing scope: corpus:write" {
		t.Errorf("POST bulk with corpus:read: %d %v", status, body)
	}
	ct, raw = webtest.MultipartFile("file", "corpus.csv", csv)
	if status, body = c.ExchangeRaw("POST", imp, readOnly, ct, raw, true); status != http.StatusForbidden {
		t.Errorf("POST import with corpus:read: %d %v", status, body)
	}
	if status, body = c.Exchange("GET", base+"/"+hoursID, b.Token(t, ten.ID, auth.ScopeSegmentsRead), nil, true); status != http.StatusForbidden {
		t.Errorf("GET entry with segments:read: %d %v", status, body)
	}
	if status, body = c.Exchange("POST", base, ten.Token, map[string]any{"title": "t", "content": strings.Repeat("c", 1<<20)}, false); status != http.StatusRequestEntityTooLarge {
		t.Errorf("POST large body: %d %v", status, body)
	}

	// The plan's corpus limit: 429 on create, upserts of existing entries still work.
	free := b.NewTenant(t, "free") // 50 entries
	fifty := fiftyOne[:50]
	if status, body = c.Exchange("POST", "/tenants/"+free.Slug+"/corpus/bulk", free.Token, map[string]any{"entries": fifty}, true); status != http.StatusOK || body.(map[string]any)["created"] != float64(50) {
		t.Fatalf("fill the free corpus: %d %v", status, body)
	}
	status, body = c.Exchange("POST", "/tenants/"+free.Slug+"/corpus", free.Token, map[string]any{"title": "one more", "content": "c"}, true)
	if status != http.StatusTooManyRequests || webtest.ErrorDetails(body)["limit"] != float64(50) {
		t.Errorf("POST over the corpus limit: %d %v", status, body)
	}
	status, body = c.Exchange("POST", "/tenants/"+free.Slug+"/corpus/bulk", free.Token, map[string]any{"entries": []any{map[string]any{"externalId": "new", "title": "t", "content": "c"}}}, true)
	if status != http.StatusTooManyRequests || webtest.ErrorDetails(body)["adding"] != float64(1) {
		t.Errorf("POST bulk over the corpus limit: %d %v", status, body)
	}
	ct, raw = webtest.MultipartFile("file", "corpus.csv", "title,content\nA,a\n")
	if status, body = c.ExchangeRaw("POST", "/tenants/"+free.Slug+"/corpus/import", free.Token, ct, raw, true); status != http.StatusTooManyRequests || webtest.ErrorDetails(body)["limit"] != float64(50) {
		t.Errorf("POST import over the corpus limit: %d %v", status, body)
	}
	if status, body = c.Exchange("POST", "/tenants/"+free.Slug+"/corpus", free.Token, map[string]any{"externalId": "0", "title": "t", "content": "changed"}, true); status != http.StatusOK {
		t.Errorf("POST upsert at the corpus limit: %d %v", status, body)
	}
}
