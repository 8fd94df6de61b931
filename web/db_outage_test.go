package web_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/web"
	"github.com/parley/parley/web/webtest"
)

// pgLine stands between a server's pool and PostgreSQL: cut drops every
// connection and refuses new ones, as a restart or a failover of the
// database does; mend lets them through again.
type pgLine struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	down  bool
	conns []net.Conn
}

func newPGLine(t *testing.T, target string) *pgLine {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pgLine{ln: ln, target: target}
	t.Cleanup(func() { _ = ln.Close(); p.cut() })
	go p.serve()
	return p
}

func (p *pgLine) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(s, c); _ = s.Close() }()
		go func() { _, _ = io.Copy(c, s); _ = c.Close() }()
	}
}

func (p *pgLine) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

func (p *pgLine) mend() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// While the database is unreachable (restarting, failing over), every
// surface answers 503 with Retry-After and the code TEMPORARILY_UNAVAILABLE,
// never 500; once it is back, the pool reconnects on its own and the same
// requests are answered.
func TestDatabaseOutageAnswers503(t *testing.T) {
	t.Parallel()
	dbtest.New(t)
	u := dbtest.URL()
	hostPort := u[strings.Index(u, "@")+1:]
	hostPort = hostPort[:strings.IndexByte(hostPort, '/')]
	line := newPGLine(t, hostPort)
	store, err := db.Open(context.Background(), strings.Replace(u, hostPort, line.ln.Addr().String(), 1), 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	model := llmtest.NewOpenAI(t)
	srv, err := web.NewServer(webtest.Config(t, webtest.ChatEnv(model.URL)), store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	b := webtest.NewBundle(t, srv, store)
	ten := b.NewTenant(t, "scale")
	chat := map[string]any{"message": "Hello", "sessionId": "outage-1"}

	line.cut()
	if r := b.Chat(t, "/chat/"+ten.Slug, chat, nil); r.Status != 503 || r.Header.Get("Retry-After") != "2" ||
		r.Body["code"] != "TEMPORARILY_UNAVAILABLE" || r.Body["error"] != "The service is briefly unavailable; try again in a few seconds." {
		t.Errorf("chat while the database is down: %d %v (Retry-After %q), want 503 TEMPORARILY_UNAVAILABLE with Retry-After 2", r.Status, r.Body, r.Header.Get("Retry-After"))
	}
	if status, body := b.Do(t, "GET", "/tenants/"+ten.Slug+"/segments", ten.Token, nil); status != 503 || body["code"] != "TEMPORARILY_UNAVAILABLE" {
		t.Errorf("the API while the database is down: %d %v, want 503 TEMPORARILY_UNAVAILABLE", status, body)
	}
	if status, body := b.Do(t, "GET", "/readyz", "", nil); status != 503 {
		t.Errorf("readyz while the database is down: %d %v, want 503", status, body)
	}

	line.mend()
	model.Push(llmtest.Turn{Text: []string{"Back again."}})
	if r := b.Chat(t, "/chat/"+ten.Slug, chat, nil); r.Status != 200 {
		t.Errorf("chat once the database is back: %d %v, want 200", r.Status, r.Body)
	}
	if status, body := b.Do(t, "GET", "/tenants/"+ten.Slug+"/segments", ten.Token, nil); status != 200 {
		t.Errorf("the API once the database is back: %d %v, want 200", status, body)
	}
}
