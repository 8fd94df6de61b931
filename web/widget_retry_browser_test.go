package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"testing"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/web/webtest"
)

// TestWidgetSendsAgainBrowser: the connection of a visitor's message is cut
// after the server answered it (as when the instance holding it dies, or a
// mobile network drops): the widget sends the message again with the same
// Idempotency-Key, and the visitor reads the answer once, while the
// conversation holds the message and its answer once and the model was
// called once.
func TestWidgetSendsAgainBrowser(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil, llmtest.Turn{Text: []string{"We open ", "at nine."}})
	ten := b.NewTenant(t, "starter")
	target, err := url.Parse(b.TS.URL)
	if err != nil {
		t.Fatal(err)
	}
	addr := webtest.NewChatAddr()
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Header.Set("X-Forwarded-For", addr)
	}, FlushInterval: -1}
	var (
		mu   sync.Mutex
		keys []string
	)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/chat/"+ten.Slug {
			proxy.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		first := len(keys) == 1
		mu.Unlock()
		if !first {
			proxy.ServeHTTP(w, r)
			return
		}
		// The first try reaches the server, which answers it in full; the
		// answer never reaches the browser.
		rec := httptest.NewRecorder()
		proxy.ServeHTTP(rec, r)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}))
	t.Cleanup(front.Close)
	b.Srv.Base.BaseURL = front.URL

	site := langSite(t, b, ten.Slug, "")
	ctx := webtest.BrowserTab(t)
	const sr = widgetShadow
	str := webtest.ScriptsOf(ctx, t).Str
	openWidgetPage(ctx, t, site.URL+"/?lang=en")
	askWidget(ctx, t, "When do you open?", 1)
	if got := str("the answers", `[...`+sr+`.querySelectorAll('.msg.bot')].map(m => m.innerText).join(' | ')`); got != "We open at nine." {
		t.Errorf("the visitor reads %q, want the answer once", got)
	}
	if got := str("errors", `[...`+sr+`.querySelectorAll('.msg.error')].length + ''`); got != "0" {
		t.Errorf("%s errors shown", got)
	}
	mu.Lock()
	sent := append([]string(nil), keys...)
	mu.Unlock()
	// Two tries at least: Chromium itself sends a request again, once, when
	// a kept-alive connection it reused closes before any answer (as the
	// first try's does here), and a try the proxy fails on its way is sent
	// again by the widget; every try carries the same key.
	if len(sent) < 2 || sent[0] == "" || slices.ContainsFunc(sent, func(k string) bool { return k != sent[0] }) {
		t.Errorf("the message's tries carried Idempotency-Key %q, want two tries or more with one key", sent)
	}
	var n, users int
	if err := b.DB.Pool().QueryRow(t.Context(), `SELECT count(*), count(*) FILTER (WHERE m.role = 'user') FROM messages m
		JOIN conversations c ON c.id = m.conversation_id WHERE c.tenant_id = $1`, ten.ID).Scan(&n, &users); err != nil || n != 2 || users != 1 {
		t.Errorf("stored %d messages, %d of the visitor (%v); want the message and its answer once", n, users, err)
	}
	if got := len(llm.Requests()); got != 1 {
		t.Errorf("the model was called %d times, want once", got)
	}
}
