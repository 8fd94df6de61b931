package web_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/web"
	"github.com/parley/parley/web/webtest"
)

// Issue 14, finding 3: a NUL byte or invalid UTF-8 in a path, query
// parameter, header, form field or JSON body is a 400 naming it, not a 500
// from PostgreSQL.
func TestEdgeRefusesTextPostgresCannotStore(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "scale")
	chat := map[string]any{"message": "hello", "sessionId": "s-edge"}
	form := map[string]any{"fields": map[string]any{"email": "a@example.com"}}
	cases := []struct {
		name, method, path string
		headers            map[string]string
		body               any
		want               string // the error message
	}{
		{"chat segment not UTF-8", "POST", "/chat/" + ten.Slug + "?segment=%ff", nil, chat,
			`query parameter "segment" must be valid UTF-8 text without NUL bytes`},
		{"form segment NUL", "POST", "/form/" + ten.Slug + "?segment=%00", nil, form,
			`query parameter "segment" must be valid UTF-8 text without NUL bytes`},
		{"agent model header", "POST", "/chat/" + ten.Slug, map[string]string{"X-Agent-Model": "\xff\xfe"}, chat,
			"header X-Agent-Model must be valid UTF-8 text without NUL bytes"},
		{"corpus search", "GET", "/tenants/" + ten.Slug + "/corpus?search=%c3%28", nil, nil,
			`query parameter "search" must be valid UTF-8 text without NUL bytes`},
		{"segment id NUL", "GET", "/tenants/" + ten.Slug + "/segments/%00", nil, nil,
			"the path must be valid UTF-8 text without NUL bytes"},
		{"slug NUL", "GET", "/tenants/a%00b", nil, nil,
			"the path must be valid UTF-8 text without NUL bytes"},
		{"parameter name", "GET", "/tenants/" + ten.Slug + "/corpus?%ff=1", nil, nil,
			"a query parameter name must be valid UTF-8 text without NUL bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := map[string]string{"Authorization": "Bearer " + ten.Token, "X-Forwarded-For": webtest.NewChatAddr()}
			for k, v := range tc.headers {
				h[k] = v
			}
			body := ""
			if tc.body != nil {
				raw, _ := json.Marshal(tc.body)
				body = string(raw)
			}
			status, got, raw := b.Request(t, tc.method, tc.path, h, body)
			if status != http.StatusBadRequest || got["error"] != tc.want {
				t.Errorf("%d %s, want 400 %q", status, raw, tc.want)
			}
		})
	}

	t.Run("JSON body not UTF-8", func(t *testing.T) {
		t.Parallel()
		status, got, raw := b.Request(t, "POST", "/tenants/"+ten.Slug+"/segments", webtest.Bearer(ten.Token),
			"{\"name\": \"Sales \xff\", \"slug\": \"sales-utf8\"}")
		if status != http.StatusBadRequest || webtest.Details(t, got)["name"] != "must be valid UTF-8 text" {
			t.Errorf("%d %s, want 400 naming name", status, raw)
		}
		if n := b.Count(t, `SELECT count(*) FROM segments WHERE slug = 'sales-utf8'`); n != 0 {
			t.Errorf("%d segments stored", n)
		}
	})
	t.Run("JSON body with NUL", func(t *testing.T) {
		t.Parallel()
		status, got, raw := b.Request(t, "POST", "/tenants/"+ten.Slug+"/segments", webtest.Bearer(ten.Token),
			`{"name": "Sales\u0000", "slug": "sales-nul"}`)
		if status != http.StatusBadRequest || webtest.Details(t, got)["name"] == nil {
			t.Errorf("%d %s, want 400 naming name", status, raw)
		}
	})
	// A lone surrogate escape is no character: refused like invalid UTF-8
	// rather than stored as U+FFFD. A pair, or an escaped backslash before
	// "ud800", is text.
	for _, tc := range []struct {
		name, value string
		refused     bool
	}{
		{"high alone", `Sales \ud800`, true},
		{"low alone", `Sales \udfff`, true},
		{"high then text", `\ud800abc`, true},
		{"two highs", `\ud800\ud800`, true},
		{"low then high", `\udc00\ud800`, true},
		{"pair", `Sales \ud83d\ude00`, false},
		{"upper-case pair", `Sales \uD83D\uDE00`, false},
		{"escaped backslash", `Sales \\ud800`, false},
	} {
		t.Run("JSON body, "+tc.name, func(t *testing.T) {
			t.Parallel()
			slug := "sales-sur-" + strings.ReplaceAll(tc.name, " ", "-")
			status, got, raw := b.Request(t, "POST", "/tenants/"+ten.Slug+"/segments", webtest.Bearer(ten.Token),
				`{"name": "`+tc.value+`", "slug": "`+slug+`", "systemPrompt": "Help."}`)
			n := b.Count(t, `SELECT count(*) FROM segments WHERE slug = $1`, slug)
			if tc.refused && (status != http.StatusBadRequest || webtest.Details(t, got)["name"] != "must be valid UTF-8 text" || n != 0) {
				t.Errorf("%d %s (%d stored), want 400 naming name", status, raw, n)
			}
			if !tc.refused && (status != http.StatusCreated || n != 1) {
				t.Errorf("%d %s, want 201", status, raw)
			}
		})
	}
	t.Run("chat message with a lone surrogate", func(t *testing.T) {
		t.Parallel()
		status, _, raw := b.Request(t, "POST", "/chat/"+ten.Slug, map[string]string{"X-Forwarded-For": webtest.NewChatAddr()},
			`{"message": "hi \udfff", "sessionId": "s-surrogate"}`)
		if status != http.StatusBadRequest {
			t.Errorf("%d %s, want 400", status, raw)
		}
	})
	t.Run("dashboard page", func(t *testing.T) {
		t.Parallel()
		p := b.NewAdminClient(t).Get("/admin/corpus?search=%00")
		if p.Status != http.StatusBadRequest || !strings.Contains(p.Doc.Text(), `query parameter "search" must be valid UTF-8 text`) {
			t.Errorf("%d %.500s", p.Status, p.Body)
		}
	})
}

// A dashboard form field with a NUL byte is a 400 page naming the field;
// nothing is saved.
func TestEdgeRefusesFormFieldNUL(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.OwnedTenant(t, "scale")
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	c.Get("/admin/corpus/new")
	p := c.Submit("/admin/corpus", url.Values{"title": {"Bad\x00title"}, "content": {"Some content"}})
	if p.Status != http.StatusBadRequest || !strings.Contains(p.Doc.Text(), `form field "title" must be valid UTF-8 text without NUL bytes`) {
		t.Errorf("%d %.500s", p.Status, p.Body)
	}
	if n := b.Count(t, `SELECT count(*) FROM corpus_entries WHERE tenant_id = $1`, ten.ID); n != 0 {
		t.Errorf("%d entries stored", n)
	}
}

// Issue 14, finding 6: an endpoint that reads JSON refuses another body type
// with 415; JSON with parameters or a +json type passes.
func TestEdgeRequiresJSONBodies(t *testing.T) {
	t.Parallel()
	operatorToken := strings.Repeat("o", 40)
	b := webtest.SetupEnv(t, map[string]string{"PARLEY_OPERATOR_TOKEN": operatorToken})
	ten := b.NewTenant(t, "scale")
	segment := `{"name": "Support", "slug": "support-%d", "systemPrompt": "Help."}`
	cases := []struct {
		name, path, contentType, body string
		want                          int
	}{
		{"text", "/tenants/" + ten.Slug + "/segments", "text/plain", fmt.Sprintf(segment, 1), 415},
		{"form", "/tenants/" + ten.Slug + "/segments", "application/x-www-form-urlencoded", "name=Support", 415},
		{"charset", "/tenants/" + ten.Slug + "/segments", "application/json; charset=utf-8", fmt.Sprintf(segment, 2), 201},
		{"plus json", "/tenants/" + ten.Slug + "/segments", "application/merge-patch+json", fmt.Sprintf(segment, 3), 201},
		{"chat text", "/chat/" + ten.Slug, "text/plain", `{"message": "hi", "sessionId": "s1"}`, 415},
		{"feedback", "/chat/" + ten.Slug + "/feedback", "text/plain", `{"sessionId": "s1", "positive": true}`, 415},
		{"form widget", "/form/" + ten.Slug, "multipart/form-data; boundary=x", "--x--", 415},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := map[string]string{"Authorization": "Bearer " + ten.Token, "Content-Type": tc.contentType, "X-Forwarded-For": webtest.NewChatAddr()}
			status, got, raw := b.Request(t, "POST", tc.path, h, tc.body)
			if status != tc.want {
				t.Fatalf("%d %s, want %d", status, raw, tc.want)
			}
			if tc.want == 415 && !strings.Contains(fmt.Sprint(got["error"]), "is not JSON") {
				t.Errorf("error %q does not say the body is not JSON", got["error"])
			}
		})
	}
	t.Run("every JSON operation", func(t *testing.T) {
		t.Parallel()
		// Each operation the document gives a JSON body refuses a text one.
		params := strings.NewReplacer("{slug}", ten.Slug, "{id}", "00000000-0000-0000-0000-000000000000",
			"{visitorId}", "00000000-0000-0000-0000-000000000000", "{deliveryId}", "00000000-0000-0000-0000-000000000000")
		n := 0
		for path, item := range webtest.LoadOpenAPI(t).Paths.Map() {
			for method, op := range item.Operations() {
				if op.RequestBody == nil || op.RequestBody.Value.Content.Get("application/json") == nil {
					continue
				}
				n++
				h := map[string]string{"Authorization": "Bearer " + ten.Token, "Content-Type": "text/plain", "X-Forwarded-For": webtest.NewChatAddr()}
				if strings.HasPrefix(path, "/operator/") {
					h["Authorization"] = "Bearer " + operatorToken
				}
				if status, _, raw := b.Request(t, method, params.Replace(path), h, `{}`); status != http.StatusUnsupportedMediaType {
					t.Errorf("%s %s: %d %s, want 415", method, path, status, raw)
				}
			}
		}
		if n < 20 {
			t.Errorf("only %d operations with a JSON body", n)
		}
	})
	t.Run("missing", func(t *testing.T) {
		t.Parallel()
		req, _ := http.NewRequest("POST", b.TS.URL+"/tenants/"+ten.Slug+"/segments", strings.NewReader(fmt.Sprintf(segment, 4)))
		req.Header.Set("Authorization", "Bearer "+ten.Token)
		resp, err := b.TS.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		webtest.DecodeJSON(t, resp, &got)
		if resp.StatusCode != 415 || got["error"] != "Content-Type must be application/json" {
			t.Errorf("%d %v", resp.StatusCode, got)
		}
	})
	t.Run("no body", func(t *testing.T) {
		t.Parallel()
		// A request without a body passes to the endpoint, which says what is missing.
		status, _, raw := b.Request(t, "POST", "/tenants/"+ten.Slug+"/segments", map[string]string{"Authorization": "Bearer " + ten.Token}, "")
		if status != http.StatusBadRequest {
			t.Errorf("%d %s, want 400", status, raw)
		}
	})
}

// Issue 14, finding 5: a client that sends headers and part of a body, then
// stalls, is cut off once the body timeout passes; an answer streamed for
// longer than the timeout, after its body arrived, is not.
func TestEdgeBodyTimeout(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	release := make(chan struct{})
	model := newSlowModel(t, release)
	store := dbtest.New(t)
	cfg := webtest.Config(t, webtest.ChatEnv(model), map[string]string{"PARLEY_BODY_TIMEOUT": timeout.String()})
	srv, err := web.NewServer(cfg, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	b := &webtest.Bundle{T: t, Srv: srv, DB: store}
	key, _ := auth.ParseKey(webtest.SecretKey)
	b.Box, _ = auth.NewBox(key)
	ten := b.NewTenant(t, "scale")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := srv.HTTPServer(ln.Addr().String())
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })

	t.Run("stalled body", func(t *testing.T) {
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		start := time.Now()
		fmt.Fprintf(conn, "POST /chat/%s HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"message\"", ten.Slug, webtest.NewChatAddr())
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second)) // the test's own bound, far above the timeout
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		var got map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&got)
		if resp.StatusCode != http.StatusBadRequest || got["error"] != "The request body did not arrive in time" {
			t.Errorf("%d %v", resp.StatusCode, got)
		}
		if _, err := io.ReadAll(conn); err != nil {
			t.Errorf("connection not closed: %v", err)
		}
		if d := time.Since(start); d < timeout || d > 5*time.Second {
			t.Errorf("cut off after %v, timeout %v", d, timeout)
		}
	})

	t.Run("long stream", func(t *testing.T) {
		body := `{"message": "hello", "sessionId": "slow-stream"}`
		req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/chat/"+ten.Slug, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", webtest.NewChatAddr())
		client := &http.Client{Transport: &webtest.ValidatingTransport{TB: t, Base: &http.Transport{}}}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		sc := bufio.NewScanner(resp.Body)
		var events []string
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			events = append(events, data)
			if len(events) == 1 {
				// The first words are out: keep the stream open past the timeout.
				time.Sleep(3 * timeout)
				close(release)
			}
		}
		if len(events) < 2 || !strings.Contains(events[len(events)-1], `"done":true`) || !strings.Contains(strings.Join(events, ""), "after the wait") {
			t.Errorf("stream cut short: %q", events)
		}
	})
}

// newSlowModel is an OpenAI-compatible model that streams its first words,
// waits for release, then finishes its answer.
func newSlowModel(t *testing.T, release <-chan struct{}) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta string, finish any) {
			b, _ := json.Marshal(map[string]any{"id": "slow", "object": "chat.completion.chunk", "model": "test-model",
				"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": delta}, "finish_reason": finish}}})
			fmt.Fprintf(w, "data: %s\n\n", b)
			w.(http.Flusher).Flush()
		}
		chunk("First words, ", nil)
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		chunk("after the wait.", nil)
		chunk("", "stop")
		fmt.Fprint(w, "data: [DONE]\n\n")
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// Issue 14, finding 5: one address holds at most PARLEY_MAX_CONNS_PER_ADDRESS
// connections at once; a closed one frees its place; trusted proxies are not
// counted.
func TestEdgeConnectionsPerAddress(t *testing.T) {
	t.Parallel()
	serve := func(t *testing.T, max int, trusted ...netip.Prefix) (addr string, accepted <-chan net.Conn) {
		srv := &web.Server{Config: web.Config{MaxConnsPerAddress: max, TrustedProxies: trusted}}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ln = srv.LimitConns(ln)
		t.Cleanup(func() { _ = ln.Close() })
		conns := make(chan net.Conn, 10)
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				t.Cleanup(func() { _ = c.Close() })
				_, _ = c.Write([]byte("ok"))
				conns <- c
			}
		}()
		return ln.Addr().String(), conns
	}
	// served reports whether a new connection to addr is served (true) or
	// closed at once (false).
	served := func(t *testing.T, addr string) bool {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 2)
		_, err = io.ReadFull(c, buf)
		return err == nil
	}

	t.Run("capped", func(t *testing.T) {
		t.Parallel()
		addr, accepted := serve(t, 2)
		for i := range 2 {
			if !served(t, addr) {
				t.Fatalf("connection %d was not served", i+1)
			}
		}
		if served(t, addr) {
			t.Fatal("a third connection from the address was served")
		}
		_ = (<-accepted).Close()
		if !served(t, addr) {
			t.Error("a connection was not served after one closed")
		}
	})
	t.Run("trusted proxy", func(t *testing.T) {
		t.Parallel()
		addr, _ := serve(t, 1, netip.MustParsePrefix("127.0.0.1/32"))
		for i := range 3 {
			if !served(t, addr) {
				t.Fatalf("connection %d through the trusted proxy was not served", i+1)
			}
		}
	})
}
