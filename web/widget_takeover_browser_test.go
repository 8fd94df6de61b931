package web_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/manage"
	"github.com/parley/parley/web/webtest"
)

// eventually waits for cond, a state of a server the test cannot wait on
// otherwise; a hang fails the test.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: never held", what)
		}
	}
}

// setOffline cuts the tab off the network, or gives it back.
func setOffline(ctx context.Context, t *testing.T, offline bool) {
	t.Helper()
	_, err := chromedp.Call(ctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
		MatchedNetworkConditions: []*network.Conditions{{Offline: offline, DownloadThroughput: -1, UploadThroughput: -1}}})
	webtest.MustStep(t, "emulating the network", err)
}

// TestWidgetBrowserTakeover: two Parley instances on one database. The
// visitor's widget, on a page of another origin, talks to instance A; a
// person answers through instance B (its management service, which the
// REST API's takeover endpoints call). The widget shows the wait,
// then the person's replies with their name, marked as a person's; when the
// visitor's network drops while the person writes, the reply missed shows
// once the network is back, exactly once; a reload shows the conversation
// and goes on following it; the visitor's typing reaches the database, and
// the person's typing shows in the widget until their message comes; the
// hand-back closes the stream.
func TestWidgetBrowserTakeover(t *testing.T) {
	t.Parallel()
	a, _ := webtest.SetupChat(t, nil, llmtest.Turn{Text: []string{"Hello! How can I help?"}})
	b := a.SecondInstance(t)
	ten := a.NewTenant(t, "starter")
	// The visitor reaches A through a network the test can cut.
	network := newCuttable(t, a.TS.Listener.Addr().String())
	a.Srv.Base.BaseURL = network.URL()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html lang="en"><head><title>Orders</title></head>
<body><h1>Orders</h1><script src="%s/widget.js" data-tenant="%s" async></script></body></html>`, network.URL(), ten.Slug)
	}))
	t.Cleanup(site.Close)
	ctx := webtest.BrowserTab(t)
	const sr = widgetShadow
	str := func(step, js string) string {
		t.Helper()
		return webtest.MustRunStep(ctx, t, step, chromedp.Evaluate[string](js))
	}
	people := `[...` + sr + `.querySelectorAll('.msg.person')]`
	personTexts := func(step string) string {
		t.Helper()
		return str(step, people+`.map(m => m.innerText.replace(/\s+/g, ' ').trim()).join(' | ')`)
	}
	presence := sr + `.querySelector('.presence')`

	openWidgetPage(ctx, t, site.URL)
	askWidget(ctx, t, "Where is my order?", 1)
	var conv string
	if err := a.DB.Pool().QueryRow(t.Context(), `SELECT id FROM conversations WHERE tenant_id = $1`, ten.ID).Scan(&conv); err != nil {
		t.Fatal(err)
	}
	if !presenceHidden(ctx, t) {
		t.Error("a presence line while the assistant answers")
	}

	// The conversation waits for a person (put back in the queue through
	// B): the visitor's next message gets no answer from the assistant,
	// and no empty bubble, but the wait; the widget follows the stream.
	move(t, b, ten.ID, conv, parley.StatusEscalated)
	bots := str("the assistant's bubbles", `String(`+sr+`.querySelectorAll('.msg.bot').length)`)
	_, err := chromedp.Run(ctx, chromedp.Evaluate[any](`(() => { const r = `+sr+`;
		r.querySelector('textarea').value = 'I would like a person'; r.querySelector('form.compose button').click(); })()`))
	webtest.MustStep(t, "asking for a person", err)
	webtest.WaitUntil(ctx, t, "the wait", presence+`.innerText === 'Waiting for a person…' && !`+presence+`.hidden`)
	eventually(t, "the widget's stream on A", func() bool { return a.Srv.Live.Subscribers() == 1 })
	if got := str("the assistant's bubbles after", `String(`+sr+`.querySelectorAll('.msg.bot').length)`); got != bots {
		t.Errorf("%s bubbles of the assistant after the escalated turn, want %s (no empty bubble)", got, bots)
	}
	if got := str("empty bubbles", `String([...`+sr+`.querySelectorAll('.msg')].filter(m => !m.innerText.trim()).length)`); got != "0" {
		t.Errorf("%s empty bubbles", got)
	}

	// Maya answers through B: her message, her name and the sign of a
	// person, in the widget served by A.
	reply(t, b, ten.ID, conv, "Hi, I'm Maya. Let me look.")
	webtest.WaitUntil(ctx, t, "Maya's reply", people+`.length === 1`)
	if got := personTexts("Maya's reply"); got != "Maya Person Hi, I'm Maya. Let me look." {
		t.Errorf("the person's bubble reads %q", got)
	}
	webtest.WaitUntil(ctx, t, "Maya joined", presence+`.innerText === 'Maya joined the conversation'`)
	if got := str("presence role", presence+`.getAttribute('role')`); got != "status" {
		t.Errorf("the presence line's role = %q, want status", got)
	}
	if v := webtest.AxeViolations(ctx, t, webtest.AxeScript(t)); len(v) > 0 {
		t.Errorf("axe-core: %s", strings.Join(v, "; "))
	}

	// The visitor's network drops (and A's connections with it) while Maya
	// writes again; once it is back, the widget resumes after her first
	// message: the second shows, each exactly once.
	setOffline(ctx, t, true)
	network.cut()
	eventually(t, "the stream to end", func() bool { return a.Srv.Live.Subscribers() == 0 })
	reply(t, b, ten.ID, conv, "Your order ships today.")
	if n := a.Srv.Live.Subscribers(); n != 0 {
		t.Fatalf("the widget reached A while offline (%d streams): the drop was not one", n)
	}
	setOffline(ctx, t, false)
	webtest.WaitUntil(ctx, t, "the reply sent during the drop", people+`.length >= 2`)
	if got := personTexts("after the drop"); got != "Maya Person Hi, I'm Maya. Let me look. | Maya Person Your order ships today." {
		t.Errorf("the people's messages after the drop: %q", got)
	}

	// Another page of the site: the conversation with Maya is shown again,
	// open, and followed from her last message on.
	openWidgetPage(ctx, t, site.URL+"/orders")
	webtest.WaitUntil(ctx, t, "the restored conversation", people+`.length === 2 && !`+sr+`.querySelector('.panel').hidden`)
	if got := str("presence after the reload", presence+`.innerText`); got != "Maya joined the conversation" {
		t.Errorf("presence after the reload = %q", got)
	}
	eventually(t, "the stream after the reload", func() bool { return a.Srv.Live.Subscribers() == 1 })

	// Typing, both ways. The visitor types: the widget tells A, and the
	// dashboard (any instance) reads it.
	_, err = chromedp.Run(ctx, chromedp.Evaluate[any](`(() => { const i = `+sr+`.querySelector('textarea');
		i.value = 'One more'; i.dispatchEvent(new Event('input', { bubbles: true })); })()`))
	webtest.MustStep(t, "the visitor types", err)
	eventually(t, "the visitor's typing signal", func() bool {
		typing, err := b.DB.VisitorTyping(t.Context(), ten.ID, conv)
		return err == nil && typing
	})
	// Maya, signed in to the dashboard, holds the conversation and types
	// (through B): the widget on A says so until her message comes.
	hash, err := b.Srv.Base.Passwords.Hash("maya's password 1")
	webtest.MustStep(t, "hashing", err)
	webtest.MustStep(t, "adding Maya", b.DB.AddOwner(t.Context(), ten.ID, "maya@"+ten.Slug+".test", hash, false))
	var uid string
	webtest.MustStep(t, "Maya holds it", b.DB.Pool().QueryRow(t.Context(), `UPDATE conversations SET assigned_user_id = u.id
		FROM users u WHERE u.email = $1 AND conversations.id = $2 RETURNING u.id`, "maya@"+ten.Slug+".test", conv).Scan(&uid))
	maya := &parley.Holder{UserID: &uid, Name: "Maya"}
	if recorded, err := b.DB.SignalPersonTyping(t.Context(), ten.ID, conv, *maya); err != nil || !recorded {
		t.Fatalf("Maya's typing signal: %v, %v", recorded, err)
	}
	personTyping := sr + `.querySelector('.person-typing')`
	webtest.WaitUntil(ctx, t, "Maya typing", personTyping+`.innerText === 'Maya is typing…'`)
	// Maya replies in the dashboard, in a browser context of her own served
	// by B: the widget, served by A, shows it.
	owner := ten
	owner.OwnerEmail, owner.Password = "maya@"+ten.Slug+".test", "maya's password 1"
	inbox := webtest.BrowserTab(t)
	webtest.OpenSignedIn(inbox, t, b, owner, "/admin/conversations/"+conv)
	webtest.MustStep(t, "Maya's reply from the dashboard", chromedp.Do(inbox, chromedp.WaitVisible(chromedp.ID("reply")),
		webtest.KeyIn(chromedp.ID("reply"), "Anything else?"), chromedp.KeyEvent("\r")))
	webtest.WaitUntil(ctx, t, "the reply after the reload", people+`.length >= 3`)
	if got := str("typing after the reply", personTyping+`.innerText`); got != "" {
		t.Errorf("the widget still says %q after Maya's message", got)
	}
	if got := strings.ToLower(personTexts("after the reload")); strings.Count(got, "your order ships today.") != 1 || !strings.HasSuffix(got, "maya person anything else?") {
		t.Errorf("the people's messages after the reload: %q", got)
	}

	// Maya hands the conversation back from the dashboard: the assistant
	// is back, the stream closed. The button is found and clicked in one
	// evaluation: the page's poll may swap it out between a wait that found
	// it and a click that follows (chromedp's "Could not find node").
	webtest.WaitUntil(inbox, t, "handing back", `(() => { const b = document.getElementById('hand-back');
		if (!b || b.offsetParent === null || b.disabled) return false; b.click(); return true; })()`)
	webtest.WaitUntil(ctx, t, "the hand-back", presence+`.innerText === 'The assistant is back'`)
	eventually(t, "the stream to close", func() bool { return a.Srv.Live.Subscribers() == 0 })
	webtest.SaveScreenshot(ctx, t, "widget-takeover")
}

// move moves the conversation through instance b, as the REST API's
// POST .../conversations/{id}/state does (a person of the integrator's).
func move(t *testing.T, b *webtest.Bundle, tenantID, conv, status string) {
	t.Helper()
	if _, err := b.Srv.Base.Manage.MoveConversation(t.Context(), tenantID, conv, manage.ConversationStateInput{Status: status}, nil); err != nil {
		t.Fatal(err)
	}
}

// reply stores Maya's reply through instance b, as the REST API's
// POST .../conversations/{id}/messages does.
func reply(t *testing.T, b *webtest.Bundle, tenantID, conv, text string) {
	t.Helper()
	in := manage.PersonReplyInput{Content: text, AuthorName: "Maya"}
	if _, _, err := b.Srv.Base.Manage.ReplyAsPerson(t.Context(), tenantID, conv, in, nil); err != nil {
		t.Fatal(err)
	}
}

// cuttable is a TCP relay to target standing for the visitor's network:
// cut closes every connection through it, as a dropped network would.
type cuttable struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
}

func newCuttable(t *testing.T, target string) *cuttable {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cuttable{ln: ln, target: target}
	t.Cleanup(func() { ln.Close(); c.cut() })
	go c.relay()
	return c
}

// URL is the address the visitor uses for the target.
func (c *cuttable) URL() string { return "http://" + c.ln.Addr().String() }

func (c *cuttable) relay() {
	for {
		in, err := c.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", c.target)
		if err != nil {
			in.Close()
			continue
		}
		c.mu.Lock()
		c.conns = append(c.conns, in, out)
		c.mu.Unlock()
		go func() { _, _ = io.Copy(out, in); out.Close() }()
		go func() { _, _ = io.Copy(in, out); in.Close() }()
	}
}

// cut closes every connection open through the relay.
func (c *cuttable) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		conn.Close()
	}
	c.conns = nil
}

// presenceHidden reports whether the widget shows no presence line.
func presenceHidden(ctx context.Context, t *testing.T) bool {
	t.Helper()
	return webtest.MustRunStep(ctx, t, "the presence line", chromedp.Evaluate[bool](widgetShadow+`.querySelector('.presence').hidden`))
}
