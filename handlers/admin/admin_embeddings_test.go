package admin_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/knowledge"
	"github.com/parley/parley/web"
	"github.com/parley/parley/web/webtest"
)

// seedEmbedded gives the tenant's entries titled titles a vector of model
// for their current text, as the embedding job saves it.
func seedEmbedded(t *testing.T, b *webtest.Bundle, tenantID, model string, titles ...string) {
	t.Helper()
	b.Exec(t, `INSERT INTO corpus_embeddings (entry_id, tenant_id, model, text_hash, embedding)
		SELECT c.id, c.tenant_id, $2, sha256(convert_to(c.title || E'\n' || coalesce(c.summary, '') || E'\n' || c.content, 'UTF8')), '\x00'::bytea
		FROM corpus_entries c WHERE c.tenant_id = $1 AND c.title = ANY($3)
		ON CONFLICT (entry_id) DO UPDATE SET model = excluded.model, text_hash = excluded.text_hash`, tenantID, model, titles)
}

// whenShown is a time as the status block writes it, in the tenant's zone.
var whenShown = regexp.MustCompile(`\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2}`)

// TestAdminEmbeddings drives the "Search by meaning" page over HTTP: the
// link from the knowledge base, a fresh tenant's page, saves refused with
// the errors beside their fields, a save (the key sealed, never shown,
// kept by an empty field, removed by its box), the status block and its
// polling, the last error, removing the endpoint, CSRF, and another
// tenant's page.
func TestAdminEmbeddings(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ctx := context.Background()
	ten, other := b.OwnedTenant(t, "starter"), b.OwnedTenant(t, "starter")
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	const (
		page   = "/admin/corpus/embeddings"
		status = page + "/status"
		key    = "sk-embed-very-secret-7302"
		model  = "text-embedding-3-small"
	)
	settings := func() knowledge.EmbeddingSettings {
		t.Helper()
		s, err := b.DB.EmbeddingSettings(ctx, ten.ID)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	form := func(u, m, dims, k string) url.Values {
		return url.Values{"embeddingsUrl": {u}, "embeddingsModel": {m}, "embeddingsDimensions": {dims}, "embeddingsApiKey": {k}}
	}
	noKey := func(t *testing.T, p webtest.AdminPage) {
		t.Helper()
		if strings.Contains(p.Body, key) {
			t.Errorf("the page shows the key")
		}
		if v, _ := p.Doc.Find("#embeddingsApiKey").Attr("value"); v != "" {
			t.Errorf("the key field holds %q", v)
		}
	}

	t.Run("Linked", func(t *testing.T) {
		p := c.As(t).Get("/admin/corpus")
		if href, _ := p.Doc.Find("#embeddings-link").Attr("href"); href != page || p.Text("#embeddings-link") != "Search by meaning" {
			t.Errorf("knowledge base links %q at %q", p.Text("#embeddings-link"), href)
		}
	})

	t.Run("Fresh", func(t *testing.T) {
		p := c.As(t).Get(page)
		if p.Status != http.StatusOK || p.Text("main h1") != "Search by meaning" {
			t.Fatalf("page: %d %q", p.Status, p.Text("main h1"))
		}
		about := p.Text("#embeddings-about")
		for _, want := range []string{"another language", "optional", "typos and your synonyms", "OpenAI-compatible",
			"OpenAI, Mistral, Ollama", "stored encrypted and never shown again"} {
			if !strings.Contains(about, want) {
				t.Errorf("the introduction lacks %q: %q", want, about)
			}
		}
		if src, _ := p.Doc.Find("#embeddings-status").Attr("data-source"); src != "none" || !strings.Contains(p.Text("#embeddings-source"), "Not in use") {
			t.Errorf("source %q: %q", src, p.Text("#embeddings-source"))
		}
		if n := p.Doc.Find("#embeddings-progress, #embeddings-progress-text, #embeddings-error, #embeddings-status[hx-get]").Length(); n != 0 {
			t.Errorf("a fresh tenant's status shows progress or polls: %d elements", n)
		}
		if p.Doc.Find("#embeddings-remove, #removeApiKey").Length() != 0 {
			t.Error("nothing saved, yet the page offers to remove it")
		}
		if cur, _ := p.Doc.Find(`nav a[aria-current="page"]`).Attr("href"); cur != "/admin/corpus" {
			t.Errorf("current nav item %q, want the knowledge base", cur)
		}
		for _, id := range []string{"embeddingsUrl", "embeddingsModel", "embeddingsDimensions", "embeddingsApiKey"} {
			if p.Doc.Find(`label[for="`+id+`"]`).Length() != 1 {
				t.Errorf("#%s has no label", id)
			}
		}
		in := p.Doc.Find("#embeddingsApiKey")
		if typ, _ := in.Attr("type"); typ != "password" || in.AttrOr("autocomplete", "") != "off" || in.AttrOr("placeholder", "") != "" {
			t.Errorf("key field: type %q, autocomplete %q, placeholder %q", typ, in.AttrOr("autocomplete", ""), in.AttrOr("placeholder", ""))
		}
	})

	t.Run("Refused", func(t *testing.T) {
		const ok = "https://embed.example.com/v1"
		for _, tc := range []struct {
			name  string
			form  url.Values
			field string
			want  string
			typed string // the address the form shows again
		}{
			{"NotHTTP", form("ftp://x", model, "", ""), "embeddingsUrl", "must be an absolute URL", "ftp://x"},
			{"NoAddress", form(" ", model, "", ""), "embeddingsUrl", "is required; to stop using your own endpoint", ""},
			{"PrivateAddress", form("https://10.1.2.3/v1", model, "", ""), "embeddingsUrl", "private or reserved address", "https://10.1.2.3/v1"},
			{"NoModel", form(ok, " ", "", ""), "embeddingsModel", "is required", ok},
			{"ZeroDimensions", form(ok, model, "0", ""), "embeddingsDimensions", "must be between 1 and 8192, or empty for the model's own", ok},
			{"TooManyDimensions", form(ok, model, "8193", ""), "embeddingsDimensions", "must be between 1 and 8192", ok},
			{"DimensionsNotANumber", form(ok, model, "many", ""), "embeddingsDimensions", "must be a whole number", ok},
			{"KeyOverHTTP", form("http://embed.example.com/v1", model, "", key), "embeddingsUrl", "must use https while an API key is set", "http://embed.example.com/v1"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := c.As(t)
				c.Get(page)
				p := c.Submit(page, tc.form)
				if p.Status != http.StatusUnprocessableEntity {
					t.Fatalf("status %d, want 422: %s", p.Status, p.Text("main"))
				}
				if msg := p.Text("#err-" + tc.field); !strings.Contains(msg, tc.want) {
					t.Errorf("#err-%s = %q, want it to contain %q", tc.field, msg, tc.want)
				}
				in := p.Doc.Find("#" + tc.field)
				if in.AttrOr("aria-invalid", "") != "true" || !strings.Contains(in.AttrOr("aria-describedby", ""), "err-"+tc.field) {
					t.Errorf("#%s: aria-invalid %q, aria-describedby %q", tc.field, in.AttrOr("aria-invalid", ""), in.AttrOr("aria-describedby", ""))
				}
				if v := p.Doc.Find("#embeddingsUrl").AttrOr("value", ""); v != tc.typed {
					t.Errorf("the address field holds %q, want %q", v, tc.typed)
				}
				if p.Text("#form-errors") == "" || p.Doc.Find(`#embeddings-form input[name="_csrf"]`).Length() != 1 {
					t.Errorf("alert %q; the re-rendered form needs its CSRF token", p.Text("#form-errors"))
				}
				if p.Doc.Find("#embeddings-status").Length() != 1 {
					t.Error("the re-rendered page has no status")
				}
				noKey(t, p)
			})
		}
		if s := settings(); s.URL != nil || s.Model != nil || s.SealedAPIKey != nil {
			t.Errorf("refused saves stored %+v", s)
		}
		var jobs int
		webtest.MustStep(t, "counting jobs", b.DB.Pool().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'corpus_embed' AND args->>'tenant_id' = $1`, ten.ID).Scan(&jobs))
		if jobs != 0 {
			t.Errorf("refused saves enqueued %d embedding jobs", jobs)
		}
	})

	var sealed []byte
	t.Run("Save", func(t *testing.T) {
		c := c.As(t)
		c.Get(page)
		p := c.Submit(page, form(" https://embed.example.com/v1 ", " "+model+" ", "8192", key))
		if p.Status != http.StatusSeeOther || p.Location() != page {
			t.Fatalf("save: %d to %q: %s", p.Status, p.Location(), p.Text("main"))
		}
		s := settings()
		if webtest.StrOrEmpty(s.URL) != "https://embed.example.com/v1" || webtest.StrOrEmpty(s.Model) != model || s.Dimensions == nil || *s.Dimensions != 8192 {
			t.Fatalf("stored %+v", s)
		}
		if len(s.SealedAPIKey) == 0 || bytes.Contains(s.SealedAPIKey, []byte(key)) {
			t.Fatalf("the stored key is empty or in clear: %q", s.SealedAPIKey)
		}
		if plain, err := b.Box.Open(s.SealedAPIKey); err != nil || string(plain) != key {
			t.Errorf("opening the stored key: %q, %v", plain, err)
		}
		sealed = s.SealedAPIKey
		var jobs int
		webtest.MustStep(t, "counting jobs", b.DB.Pool().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'corpus_embed' AND args->>'tenant_id' = $1`, ten.ID).Scan(&jobs))
		if jobs == 0 {
			t.Error("the save enqueued no embedding job")
		}
		st, body := b.Do(t, "GET", "/tenants/"+ten.Slug+"/embeddings", ten.Token, nil)
		if st != http.StatusOK || body["source"] != "tenant" || body["hasApiKey"] != true || body["embeddingsUrl"] != "https://embed.example.com/v1" ||
			body["vectorModel"] != model+"@8192" {
			t.Errorf("API: %d %v", st, body)
		}

		p = c.Get(page)
		if p.Text(".flash.ok") == "" || p.Doc.Find("#embeddingsUrl").AttrOr("value", "") != "https://embed.example.com/v1" ||
			p.Doc.Find("#embeddingsModel").AttrOr("value", "") != model || p.Doc.Find("#embeddingsDimensions").AttrOr("value", "") != "8192" {
			t.Errorf("after saving: flash %q, fields %q %q %q", p.Text(".flash.ok"), p.Doc.Find("#embeddingsUrl").AttrOr("value", ""),
				p.Doc.Find("#embeddingsModel").AttrOr("value", ""), p.Doc.Find("#embeddingsDimensions").AttrOr("value", ""))
		}
		if ph := p.Doc.Find("#embeddingsApiKey").AttrOr("placeholder", ""); !strings.Contains(ph, "key is saved") || p.Doc.Find("#removeApiKey").Length() != 1 {
			t.Errorf("a saved key: placeholder %q, remove box %d", ph, p.Doc.Find("#removeApiKey").Length())
		}
		if src, _ := p.Doc.Find("#embeddings-status").Attr("data-source"); src != "tenant" || !strings.Contains(p.Text("#embeddings-source"), "your own endpoint") {
			t.Errorf("source %q: %q", src, p.Text("#embeddings-source"))
		}
		if p.Doc.Find("#embeddings-no-entries").Length() != 1 || p.Doc.Find("#embeddings-remove").Length() != 1 {
			t.Errorf("no entries: %q; remove section %d", p.Text("#embeddings-status"), p.Doc.Find("#embeddings-remove").Length())
		}
		noKey(t, p)
	})

	t.Run("KeepKey", func(t *testing.T) {
		c := c.As(t)
		c.Get(page)
		p := c.Submit(page, form("https://embed.example.com/v2", model, "", ""))
		if p.Status != http.StatusSeeOther {
			t.Fatalf("save: %d: %s", p.Status, p.Text("main"))
		}
		if s := settings(); webtest.StrOrEmpty(s.URL) != "https://embed.example.com/v2" || s.Dimensions != nil || !bytes.Equal(s.SealedAPIKey, sealed) {
			t.Errorf("after a save with an empty key field: url %q, dimensions %v, key kept %v", webtest.StrOrEmpty(s.URL), s.Dimensions, bytes.Equal(s.SealedAPIKey, sealed))
		}
		// The kept key still refuses http.
		p = c.Submit(page, form("http://embed.example.com/v1", model, "", ""))
		if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Text("#err-embeddingsUrl"), "must use https") {
			t.Errorf("http with the kept key: %d %q", p.Status, p.Text("#err-embeddingsUrl"))
		}
	})

	t.Run("RemoveKey", func(t *testing.T) {
		c := c.As(t)
		c.Get(page)
		f := form("http://embed.example.com/v1", model, "", "")
		f.Set("removeApiKey", "true")
		p := c.Submit(page, f)
		if p.Status != http.StatusSeeOther {
			t.Fatalf("save: %d: %s", p.Status, p.Text("main"))
		}
		if s := settings(); s.SealedAPIKey != nil || webtest.StrOrEmpty(s.URL) != "http://embed.example.com/v1" {
			t.Errorf("after removing the key: %+v", s)
		}
		p = c.Get(page)
		if p.Doc.Find("#removeApiKey").Length() != 0 || p.Doc.Find("#embeddingsApiKey").AttrOr("placeholder", "") != "" {
			t.Error("the page still says a key is saved")
		}
	})

	t.Run("Status", func(t *testing.T) {
		c := c.As(t)
		b.Exec(t, `INSERT INTO corpus_entries (tenant_id, title, content, is_active) VALUES
			($1, 'Opening hours', 'We open at 9.', true), ($1, 'Returns', 'Within 30 days.', true),
			($1, 'Delivery', 'In two days.', true), ($1, 'Old offer', 'Gone.', false)`, ten.ID)
		seedEmbedded(t, b, ten.ID, model, "Opening hours", "Returns", "Old offer")
		seedEmbedded(t, b, ten.ID, "another-model", "Delivery")
		hx := map[string]string{"HX-Request": "true"}
		p := c.Do("GET", status, nil, hx)
		if p.Status != http.StatusOK || p.Doc.Find("main").Length() != 0 || p.Text("#embeddings-progress-text") != "2 of 3 entries ready" {
			t.Fatalf("status: %d %q: %s", p.Status, p.Text("#embeddings-progress-text"), p.Body)
		}
		bar := p.Doc.Find("progress#embeddings-progress")
		if bar.AttrOr("value", "") != "2" || bar.AttrOr("max", "") != "3" || bar.AttrOr("aria-labelledby", "") != "embeddings-progress-text" {
			t.Errorf("progress: value %q max %q labelled by %q", bar.AttrOr("value", ""), bar.AttrOr("max", ""), bar.AttrOr("aria-labelledby", ""))
		}
		block := p.Doc.Find("#embeddings-status")
		if block.AttrOr("hx-get", "") != status || block.AttrOr("hx-trigger", "") != "every 3s" || block.AttrOr("hx-swap", "") != "outerHTML" {
			t.Errorf("not polling while entries are prepared: %q %q %q", block.AttrOr("hx-get", ""), block.AttrOr("hx-trigger", ""), block.AttrOr("hx-swap", ""))
		}
		if p := c.Get(page); p.Text("#embeddings-progress-text") != "2 of 3 entries ready" || p.Doc.Find("#embeddings-status[hx-get]").Length() != 1 {
			t.Errorf("the page's status: %q", p.Text("#embeddings-status"))
		}

		seedEmbedded(t, b, ten.ID, model, "Delivery")
		p = c.Do("GET", status, nil, hx)
		if p.Text("#embeddings-progress-text") != "3 of 3 entries ready" || p.Doc.Find("[hx-get], [hx-trigger]").Length() != 0 {
			t.Errorf("all ready: %q, still polling %d", p.Text("#embeddings-progress-text"), p.Doc.Find("[hx-get]").Length())
		}
		// An entry whose text changed waits for a new vector.
		b.Exec(t, `UPDATE corpus_entries SET content = 'In three days.' WHERE tenant_id = $1 AND title = 'Delivery'`, ten.ID)
		if p := c.Do("GET", status, nil, hx); p.Text("#embeddings-progress-text") != "2 of 3 entries ready" {
			t.Errorf("after an edit: %q", p.Text("#embeddings-progress-text"))
		}
	})

	t.Run("LastError", func(t *testing.T) {
		c := c.As(t)
		webtest.MustStep(t, "recording a failure", b.DB.RecordEmbedOutcome(ctx, ten.ID, model, false, errors.New("the endpoint answered 401: invalid key")))
		p := c.Get(page)
		msg := p.Text("#embeddings-error")
		if !strings.Contains(msg, "the endpoint answered 401: invalid key") || !strings.Contains(msg, "Check the address, model and key; Parley retries on its own.") ||
			!whenShown.MatchString(msg) {
			t.Errorf("the error: %q", msg)
		}
		if p.Doc.Find("#embeddings-status[hx-get]").Length() != 0 || p.Doc.Find("#embeddings-last-success").Length() != 0 {
			t.Errorf("after a failure: polling %d, last success %q", p.Doc.Find("#embeddings-status[hx-get]").Length(), p.Text("#embeddings-last-success"))
		}
		webtest.MustStep(t, "recording a success", b.DB.RecordEmbedOutcome(ctx, ten.ID, model, true, nil))
		p = c.Do("GET", status, nil, map[string]string{"HX-Request": "true"})
		if p.Doc.Find("#embeddings-error").Length() != 0 || !whenShown.MatchString(p.Text("#embeddings-last-success")) {
			t.Errorf("after a success: error %q, last success %q", p.Text("#embeddings-error"), p.Text("#embeddings-last-success"))
		}
	})

	t.Run("OtherTenant", func(t *testing.T) {
		oc := b.NewAdminClient(t)
		oc.SignIn(other)
		p := oc.Get(page)
		if src, _ := p.Doc.Find("#embeddings-status").Attr("data-source"); src != "none" || p.Doc.Find("#embeddings-progress").Length() != 0 {
			t.Errorf("another tenant's source %q, progress %d", src, p.Doc.Find("#embeddings-progress").Length())
		}
		if v := p.Doc.Find("#embeddingsUrl").AttrOr("value", ""); v != "" || p.Doc.Find("#embeddings-remove").Length() != 0 {
			t.Errorf("another tenant sees the address %q", v)
		}
		if p := oc.Get(status); strings.Contains(p.Body, "entries ready") {
			t.Errorf("another tenant's status: %s", p.Body)
		}
		if s := settings(); webtest.StrOrEmpty(s.URL) != "http://embed.example.com/v1" {
			t.Errorf("the tenant's settings changed: %+v", s)
		}
	})

	t.Run("CSRF", func(t *testing.T) {
		c := c.As(t)
		if p := c.Post(page, form("https://embed.example.com/v3", model, "", "")); p.Status != http.StatusForbidden {
			t.Errorf("save without the token: %d", p.Status)
		}
		if p := c.Post(page+"/delete", url.Values{}); p.Status != http.StatusForbidden {
			t.Errorf("delete without the token: %d", p.Status)
		}
		if s := settings(); webtest.StrOrEmpty(s.URL) != "http://embed.example.com/v1" {
			t.Errorf("after requests without the token: %+v", s)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		c := c.As(t)
		c.Get(page)
		p := c.Do("POST", page+"/delete", url.Values{"_csrf": {c.CSRF}}, map[string]string{"HX-Request": "true"})
		if p.Status != http.StatusOK || p.Header.Get("HX-Redirect") != page {
			t.Errorf("htmx delete: %d to %q", p.Status, p.Header.Get("HX-Redirect"))
		}
		if s := settings(); s.URL != nil || s.Model != nil || s.SealedAPIKey != nil || s.Dimensions != nil {
			t.Errorf("after delete: %+v", s)
		}
		p = c.Get(page)
		if src, _ := p.Doc.Find("#embeddings-status").Attr("data-source"); src != "none" || !strings.Contains(p.Text(".flash.ok"), "no longer used") {
			t.Errorf("after delete: source %q, flash %q", src, p.Text(".flash.ok"))
		}
		// Without htmx: saved again, then removed with a plain form.
		if p := c.Submit(page, form("https://embed.example.com/v1", model, "", key)); p.Status != http.StatusSeeOther {
			t.Fatalf("save: %d: %s", p.Status, p.Text("main"))
		}
		c.Get(page)
		if p := c.Submit(page+"/delete", url.Values{}); p.Status != http.StatusSeeOther || p.Location() != page {
			t.Errorf("delete: %d to %q", p.Status, p.Location())
		}
		if s := settings(); s.URL != nil || s.SealedAPIKey != nil {
			t.Errorf("after the plain delete: %+v", s)
		}
	})
}

// With the operator's endpoint, a tenant without its own sees the
// service's default in use, and its progress.
func TestAdminEmbeddingsOperator(t *testing.T) {
	t.Parallel()
	// A store of its own over the test database's pool: its
	// EnableEmbeddings must not reach the package's other tests.
	store, err := db.New(dbtest.New(t).Pool())
	if err != nil {
		t.Fatal(err)
	}
	cfg := webtest.Config(t, map[string]string{"PARLEY_EMBEDDINGS_URL": "https://embed.operator.example/v1", "PARLEY_EMBEDDINGS_MODEL": "concepts"})
	srv, err := web.NewServer(cfg, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	b := webtest.NewBundle(t, srv, store)
	ten := b.OwnedTenant(t, "starter")
	b.Exec(t, `INSERT INTO corpus_entries (tenant_id, title, content) VALUES ($1, 'Opening hours', 'We open at 9.'), ($1, 'Returns', 'Within 30 days.')`, ten.ID)
	seedEmbedded(t, b, ten.ID, "concepts", "Returns")
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	p := c.Get("/admin/corpus/embeddings")
	if src, _ := p.Doc.Find("#embeddings-status").Attr("data-source"); src != "operator" || !strings.Contains(p.Text("#embeddings-source"), "the service's default endpoint") {
		t.Errorf("source %q: %q", src, p.Text("#embeddings-source"))
	}
	if p.Text("#embeddings-progress-text") != "1 of 2 entries ready" || p.Doc.Find("#embeddings-status[hx-get]").Length() != 1 {
		t.Errorf("progress %q, polling %d", p.Text("#embeddings-progress-text"), p.Doc.Find("#embeddings-status[hx-get]").Length())
	}
	if p.Doc.Find("#embeddings-remove").Length() != 0 || p.Doc.Find("#embeddingsUrl").AttrOr("value", "") != "" {
		t.Error("the operator's endpoint shows as the tenant's own")
	}
}

// TestAdminEmbeddingsBrowser: on a phone, the page with progress, then with
// an error, then with refused fields, has no serious axe-core violation and
// does not scroll sideways; the status follows the job by itself (htmx
// polling) and stops asking once every entry is ready; removing the
// endpoint asks first.
func TestAdminEmbeddingsBrowser(t *testing.T) {
	t.Parallel()
	axe := webtest.AxeScript(t)
	b := webtest.Setup(t)
	ten := b.OwnedTenant(t, "starter")
	const model = "text-embedding-3-small"
	b.MustDo(t, 200, "PUT", "/tenants/"+ten.Slug+"/embeddings", ten.Token, map[string]any{"embeddingsUrl": "https://embed.example.com/v1",
		"embeddingsModel": model, "embeddingsApiKey": "sk-embed-browser-1"})
	b.Exec(t, `INSERT INTO corpus_entries (tenant_id, title, content) VALUES ($1, 'Opening hours', 'We open at 9.'), ($1, 'Returns', 'Within 30 days.')`, ten.ID)
	seedEmbedded(t, b, ten.ID, model, "Returns")

	ctx := webtest.BrowserTab(t)
	webtest.WatchCSP(ctx, t)
	webtest.MustStep(t, "resizing", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))
	check := func(state string) {
		t.Helper()
		webtest.WaitUntil(ctx, t, state, `document.readyState === 'complete' && !!document.querySelector('main h1')`)
		if over := webtest.MustRunStep(ctx, t, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth - innerWidth`)); over > 0 {
			t.Errorf("%s: the page scrolls sideways by %d px", state, over)
		}
		for _, v := range webtest.AxeViolations(ctx, t, axe) {
			t.Errorf("%s: axe: %s", state, v)
		}
		for _, v := range webtest.CSPViolations(ctx, t) {
			t.Errorf("%s: refused by the Content-Security-Policy: %s", state, v)
		}
	}

	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/corpus/embeddings")
	check("in progress")
	// The status block replaces itself every 3 s (htmx): read its text as a
	// condition, not once, so that a read during a swap does not see nothing.
	webtest.WaitUntil(ctx, t, "the progress", `(document.getElementById('embeddings-progress-text') || {}).textContent === '1 of 2 entries ready'`)
	seedEmbedded(t, b, ten.ID, model, "Opening hours")
	webtest.WaitUntil(ctx, t, "the status to follow the job", `(document.getElementById('embeddings-progress-text') || {}).textContent === '2 of 2 entries ready'
		&& !document.getElementById('embeddings-status').hasAttribute('hx-get')`)

	webtest.MustStep(t, "recording a failure", b.DB.RecordEmbedOutcome(context.Background(), ten.ID, model, false, errors.New("the endpoint answered 401")))
	webtest.MustStep(t, "reloading", chromedp.Do(ctx, chromedp.Reload()))
	webtest.WaitUntil(ctx, t, "the error", `!!document.getElementById('embeddings-error')`)
	check("failed")

	webtest.MustStep(t, "filling the form", chromedp.Do(ctx, chromedp.Steps(webtest.FillField("embeddingsUrl", "ftp://x"), webtest.FillField("embeddingsModel", " "))))
	if status := webtest.SubmitForm(ctx, t, "#save-embeddings"); status != http.StatusUnprocessableEntity {
		t.Fatalf("refused save: status %d", status)
	}
	check("refused")
	if id := webtest.MustRunStep(ctx, t, "focus", chromedp.Evaluate[string](`document.activeElement.id`)); id != "embeddingsUrl" {
		t.Errorf("after a refused save the focus is on %q, want the address", id)
	}

	if msg := webtest.ClickAndConfirm(ctx, t, "#remove-embeddings"); !strings.Contains(msg, "Stop using your endpoint?") {
		t.Errorf("confirmation %q", msg)
	}
	webtest.WaitUntil(ctx, t, "the page after removing", `document.readyState === 'complete' && /no longer used/.test((document.querySelector('.flash.ok') || {}).textContent || '')`)
	if s, _ := b.DB.EmbeddingSettings(context.Background(), ten.ID); s.URL != nil || s.SealedAPIKey != nil {
		t.Errorf("after removing: %+v", s)
	}
}
