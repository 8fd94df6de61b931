package public_test

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/db"
	"github.com/parley/parley/mail/mailtest"
	"github.com/parley/parley/web/webtest"
)

// *db.DB links anonymous visitors for the engine.
var _ agent.AnonymousLinker = (*db.DB)(nil)

// newAnonymousID is an anonymous id as the widget makes one.
func newAnonymousID(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "anon_" + hex.EncodeToString(b)
}

// TestChatAnonymousVisitor: the third step of the spec's visitor
// resolution. A browser's anonymous id (body anonymousId) resolves to an
// anonymous visitor of the tenant, whose REMEMBER_FACT facts come back in
// later conversations with the same id, and to nobody else: not another
// id, not another tenant with the same id. X-Visitor-Id and visitorId win
// over it; a visitor token wins and links it (its facts move); a malformed
// id is a 400.
func TestChatAnonymousVisitor(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	ten := b.NewTenant(t, "starter")
	other := b.NewTenant(t, "starter")
	for _, x := range []webtest.Tenant{ten, other} {
		b.MustDo(t, 201, "POST", "/tenants/"+x.Slug+"/tools", x.Token, map[string]any{"name": "Remember", "description": "Keep facts", "type": "REMEMBER_FACT"})
	}
	path := "/chat/" + ten.Slug
	anon := newAnonymousID(t)

	// say sends one message and returns the model's first request for it.
	say := func(t *testing.T, path string, body map[string]any, headers map[string]string, turns ...llmtest.Turn) (webtest.ChatResponse, llmtest.Received) {
		t.Helper()
		if len(turns) == 0 {
			turns = []llmtest.Turn{{Text: []string{"OK."}}}
		}
		llm.Push(turns...)
		n := len(llm.Requests())
		if headers == nil {
			headers = webtest.AgentHeaders
		}
		r := b.Chat(t, path, body, headers)
		if r.Status != 200 {
			t.Fatalf("got %d %v", r.Status, r.Body)
		}
		return r, llm.Requests()[n]
	}
	system := func(r llmtest.Received) string { return string(r.Chat.Messages[0].Content) }
	remember := func(key, value string) []llmtest.Turn {
		return []llmtest.Turn{
			{ToolCalls: []llmtest.ToolCall{webtest.Call("m-"+key, "remember", `{"key":"`+key+`","value":"`+value+`"}`)}},
			{Text: []string{"Noted."}},
		}
	}

	var anonVisitor string
	t.Run("RemembersAcrossConversations", func(t *testing.T) {
		r, first := say(t, path, map[string]any{"message": "I live in Lyon", "sessionId": "anon-1", "anonymousId": anon}, nil, remember("city", "Lyon")...)
		if !offered(first, "remember") {
			t.Fatalf("REMEMBER_FACT not offered to an anonymous visitor: %v", first.Chat.Tools)
		}
		if r.Body["toolResults"].(map[string]any)["Remember"] != true {
			t.Fatalf("the fact was not remembered: %v", r.Body)
		}
		var v struct {
			ID, Provider string
			Email, Ext   *string
		}
		if err := b.DB.Pool().QueryRow(t.Context(), `SELECT id, auth_provider, email, external_id FROM visitors
			WHERE tenant_id = $1 AND anonymous_key = $2`, ten.ID, webtest.AnonymousKey(anon)).Scan(&v.ID, &v.Provider, &v.Email, &v.Ext); err != nil {
			t.Fatalf("no anonymous visitor keyed by the id's SHA-256: %v", err)
		}
		if v.Provider != "anonymous" || v.Email != nil || v.Ext != nil {
			t.Errorf("anonymous visitor %+v", v)
		}
		anonVisitor = v.ID
		if n := b.Count(t, `SELECT count(*) FROM visitors WHERE position(convert_to($1, 'UTF8') IN coalesce(anonymous_key, '')) > 0
			OR external_id = $1 OR metadata::text LIKE '%'||$1||'%'`, anon); n != 0 {
			t.Errorf("the anonymous id itself is stored")
		}

		// A later conversation on the same browser: the fact is back.
		_, next := say(t, path, map[string]any{"message": "Hi again", "sessionId": "anon-2", "anonymousId": anon}, nil)
		if s := system(next); !strings.Contains(s, "city: Lyon") || strings.Contains(s, "The visitor's identity is verified.") {
			t.Errorf("the anonymous visitor's fact is not in a later conversation's prompt, or the visitor is called verified: %q", s)
		}
		if n := b.Count(t, `SELECT count(*) FROM conversations WHERE tenant_id = $1 AND session_id IN ('anon-1', 'anon-2') AND visitor_id = $2`, ten.ID, v.ID); n != 2 {
			t.Errorf("%d conversations of the anonymous visitor, want 2", n)
		}
		if n := b.Count(t, `SELECT count(*) FROM visitors WHERE tenant_id = $1`, ten.ID); n != 1 {
			t.Errorf("%d visitors, want the one anonymous visitor", n)
		}
	})

	t.Run("AnotherIdGetsNothing", func(t *testing.T) {
		_, req := say(t, path, map[string]any{"message": "Hi", "sessionId": "anon-3", "anonymousId": newAnonymousID(t)}, nil)
		if strings.Contains(system(req), "Lyon") {
			t.Errorf("another anonymous id got the fact: %q", system(req))
		}
		// Nor does naming no one.
		_, req = say(t, path, map[string]any{"message": "Hi", "sessionId": "anon-4"}, nil)
		if strings.Contains(system(req), "Lyon") || offered(req, "remember") {
			t.Errorf("a visitor with no id got memory")
		}
	})

	t.Run("AnotherTenantGetsNothing", func(t *testing.T) {
		_, req := say(t, "/chat/"+other.Slug, map[string]any{"message": "Hi", "sessionId": "anon-1", "anonymousId": anon}, nil)
		if strings.Contains(system(req), "Lyon") {
			t.Errorf("another tenant got the fact with the same anonymous id: %q", system(req))
		}
		if n := b.Count(t, `SELECT count(*) FROM visitors WHERE tenant_id = $1 AND anonymous_key = $2 AND id <> $3`, other.ID, webtest.AnonymousKey(anon), anonVisitor); n != 1 {
			t.Errorf("the other tenant's anonymous visitor is not its own")
		}
	})

	t.Run("VisitorIdWins", func(t *testing.T) {
		_, req := say(t, path, map[string]any{"message": "Hi", "sessionId": "anon-5", "anonymousId": anon}, map[string]string{"X-Visitor-Id": "crm-9", "X-Agent-Model": "m"})
		if strings.Contains(system(req), "Lyon") {
			t.Errorf("X-Visitor-Id did not win over the anonymous id")
		}
		_, req = say(t, path, map[string]any{"message": "Hi", "sessionId": "anon-6", "anonymousId": anon, "visitorId": "crm-9"}, nil)
		if strings.Contains(system(req), "Lyon") {
			t.Errorf("visitorId did not win over the anonymous id")
		}
		if n := b.Count(t, `SELECT count(*) FROM conversations c JOIN visitors v ON v.id = c.visitor_id
			WHERE c.tenant_id = $1 AND c.session_id IN ('anon-5', 'anon-6') AND v.external_id = 'crm-9'`, ten.ID); n != 2 {
			t.Errorf("conversations not the named visitor's")
		}
	})

	t.Run("Malformed", func(t *testing.T) {
		for i, id := range []string{"anon_123", "ANON_" + anon[5:], "anon_" + strings.ToUpper(anon[5:]), anon[5:], anon + "0",
			" " + anon, "anon_" + anon[6:] + "g", "anon-" + anon[5:]} {
			session := "anon-bad-" + string(rune('a'+i))
			r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": session, "anonymousId": id}, webtest.AgentHeaders)
			details, _ := r.Body["details"].(map[string]any)
			if r.Status != 400 || r.Body["error"] != parley.AnonymousIDRule || details["anonymousId"] == nil {
				t.Errorf("%q: got %d %v", id, r.Status, r.Body)
			}
			if n := b.Count(t, `SELECT count(*) FROM conversations WHERE tenant_id = $1 AND session_id = $2`, ten.ID, session); n != 0 {
				t.Errorf("%q: a conversation was stored", id)
			}
		}
		// Not a string: the body's usual type error.
		if r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "anon-bad-n", "anonymousId": 42}, webtest.AgentHeaders); r.Status != 400 {
			t.Errorf("a number: got %d %v", r.Status, r.Body)
		}
		// Checked whatever wins over it.
		if r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "anon-bad-v", "visitorId": "crm-9", "anonymousId": "anon_1"}, webtest.AgentHeaders); r.Status != 400 {
			t.Errorf("beside a visitor id: got %d %v", r.Status, r.Body)
		}
	})

	t.Run("UnderAuthModeStillItsOwn", func(t *testing.T) {
		// Under a visitor auth mode an id alone gets no memory, but an
		// anonymous visitor's memory is only what was said with its id.
		b.Exec(t, `UPDATE tenants SET visitor_auth_mode = 'jwt' WHERE id = $1`, ten.ID)
		_, req := say(t, path, map[string]any{"message": "Hi", "sessionId": "anon-7", "anonymousId": anon}, nil, remember("pet", "cat")...)
		if s := system(req); !strings.Contains(s, "city: Lyon") || strings.Contains(s, "The visitor's identity is verified.") || !offered(req, "remember") {
			t.Errorf("the anonymous visitor's own memory under jwt: %q", s)
		}
		// Naming the anonymous visitor by its id is an id alone: nothing.
		_, req = say(t, path, map[string]any{"message": "Hi", "sessionId": "anon-8"}, map[string]string{"X-Visitor-Id": anonVisitor, "X-Agent-Model": "m"})
		if strings.Contains(system(req), "Lyon") || offered(req, "remember") {
			t.Errorf("the anonymous visitor's uuid unlocked its memory under jwt")
		}
	})

	t.Run("TokenWinsAndLinks", func(t *testing.T) {
		ada := b.MustDo(t, 201, "POST", "/tenants/"+ten.Slug+"/visitors", ten.Token, map[string]any{"externalId": "ada", "email": "ada@example.com"})["id"].(string)
		b.MustDo(t, 200, "POST", "/tenants/"+ten.Slug+"/visitors/"+ada+"/memory", ten.Token, map[string]any{"key": "city", "value": "Paris"})
		b.MustDo(t, 200, "POST", "/tenants/"+ten.Slug+"/visitors/"+ada+"/memory", ten.Token, map[string]any{"key": "card", "value": "ends 4242"})
		key := b.VisitorKey(t, ten.ID)
		tok := webtest.SignVisitor(t, jwt.SigningMethodHS256, key, jwt.MapClaims{"sub": "ada", "exp": time.Now().Add(time.Minute).Unix()})

		_, req := say(t, path, map[string]any{"message": "Hi", "sessionId": "anon-9", "anonymousId": anon, "visitorToken": tok}, nil)
		s := system(req)
		// The verified visitor's facts, with what was remembered while
		// anonymous; on a key both have, the verified visitor's value.
		if !strings.Contains(s, "The visitor's identity is verified.") || !strings.Contains(s, "city: Paris") ||
			!strings.Contains(s, "pet: cat") || strings.Contains(s, "Lyon") {
			t.Errorf("the verified visitor's prompt: %q", s)
		}
		if n := b.Count(t, `SELECT count(*) FROM conversations WHERE tenant_id = $1 AND session_id = 'anon-9' AND visitor_id = $2`, ten.ID, ada); n != 1 {
			t.Errorf("the conversation is not the verified visitor's")
		}
		if n := b.Count(t, `SELECT count(*) FROM visitors WHERE id = $1 AND linked_visitor_id = $2 AND linked_at IS NOT NULL`, anonVisitor, ada); n != 1 {
			t.Errorf("the anonymous visitor is not linked to the verified one")
		}
		if n := b.Count(t, `SELECT count(*) FROM memory_facts WHERE visitor_id = $1 AND key = 'pet' AND value = 'cat'`, ada); n != 1 {
			t.Errorf("the anonymous fact did not move to the verified visitor")
		}

		// Anonymous again on the same browser: the id never unlocks the
		// verified visitor's facts, and is not verified.
		_, req = say(t, path, map[string]any{"message": "Hi", "sessionId": "anon-10", "anonymousId": anon}, nil)
		s = system(req)
		if strings.Contains(s, "Paris") || strings.Contains(s, "ends 4242") || strings.Contains(s, "pet: cat") ||
			strings.Contains(s, "The visitor's identity is verified.") {
			t.Errorf("the anonymous id got the verified visitor's memory: %q", s)
		}
		// What did not move (the key the verified visitor had) stays its own.
		if !strings.Contains(s, "city: Lyon") {
			t.Errorf("the anonymous visitor's unmoved fact is gone: %q", s)
		}
		if n := b.Count(t, `SELECT count(*) FROM conversations WHERE tenant_id = $1 AND session_id = 'anon-10' AND visitor_id = $2`, ten.ID, anonVisitor); n != 1 {
			t.Errorf("the anonymous id no longer names its anonymous visitor")
		}
		// Another tenant's anonymous visitor of the same id is not linked.
		if n := b.Count(t, `SELECT count(*) FROM visitors WHERE tenant_id = $1 AND linked_visitor_id IS NOT NULL`, other.ID); n != 0 {
			t.Errorf("another tenant's anonymous visitor was linked")
		}
	})
}

// TestChatAnonymousVisitorCode: an anonymous visitor who proves their email
// with a code is linked to the verified visitor in the same transaction:
// what they said while anonymous is in the verified visitor's memory from
// the next message.
func TestChatAnonymousVisitorCode(t *testing.T) {
	t.Parallel()
	smtp := mailtest.Start(t, mailtest.Options{})
	b, llm := webtest.SetupChat(t, map[string]string{"PARLEY_SMTP_URL": smtp.URL("Parley <no-reply@parley.test>")})
	ten := b.NewTenant(t, "starter")
	b.Exec(t, `UPDATE tenants SET visitor_auth_mode = 'otp' WHERE id = $1`, ten.ID)
	b.MustDo(t, 201, "POST", "/tenants/"+ten.Slug+"/tools", ten.Token, map[string]any{"name": "Remember", "description": "Keep facts", "type": "REMEMBER_FACT"})
	path := "/chat/" + ten.Slug
	anon := newAnonymousID(t)

	turn := func(t *testing.T, session string, calls ...llmtest.ToolCall) llmtest.Received {
		t.Helper()
		llm.Push(llmtest.Turn{ToolCalls: calls}, llmtest.Turn{Text: []string{"OK."}})
		n := len(llm.Requests())
		r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": session, "anonymousId": anon}, webtest.AgentHeaders)
		if r.Status != 200 {
			t.Fatalf("got %d %v", r.Status, r.Body)
		}
		return llm.Requests()[n+1]
	}
	if res := webtest.ToolResults(turn(t, "code-1", webtest.Call("m1", "remember", `{"key":"size","value":"M"}`))); len(res) != 1 || !strings.Contains(res[0], `"success":true`) {
		t.Fatalf("remember while anonymous: %q", res)
	}
	turn(t, "code-1", webtest.Call("c1", "send_verification_code", `{"email":"bo@example.com"}`))
	code := codeIn(t, smtp.Wait(t, "bo@example.com", 1, 5*time.Second))
	if res := webtest.ToolResults(turn(t, "code-1", webtest.Call("c2", "verify_visitor_code", `{"code":"`+code+`"}`))); !strings.Contains(res[0], `"verified":true`) {
		t.Fatalf("verify: %q", res)
	}
	var bo string
	if err := b.DB.Pool().QueryRow(t.Context(), `SELECT id FROM visitors WHERE tenant_id = $1 AND email = 'bo@example.com'`, ten.ID).Scan(&bo); err != nil {
		t.Fatal(err)
	}
	if n := b.Count(t, `SELECT count(*) FROM visitors WHERE tenant_id = $1 AND anonymous_key = $2 AND linked_visitor_id = $3`, ten.ID, webtest.AnonymousKey(anon), bo); n != 1 {
		t.Errorf("the anonymous visitor is not linked to the verified one")
	}
	llm.Push(llmtest.Turn{Text: []string{"Size M."}})
	n := len(llm.Requests())
	if r := b.Chat(t, path, map[string]any{"message": "My size?", "sessionId": "code-1", "anonymousId": anon}, webtest.AgentHeaders); r.Status != 200 {
		t.Fatalf("got %d %v", r.Status, r.Body)
	}
	if s := string(llm.Requests()[n].Chat.Messages[0].Content); !strings.Contains(s, "size: M") || !strings.Contains(s, "The visitor's identity is verified.") {
		t.Errorf("the fact remembered while anonymous is not the verified visitor's: %q", s)
	}
	// Another conversation, anonymous: the fact went with the verified visitor.
	llm.Push(llmtest.Turn{Text: []string{"Hello."}})
	n = len(llm.Requests())
	if r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "code-2", "anonymousId": anon}, webtest.AgentHeaders); r.Status != 200 {
		t.Fatalf("got %d %v", r.Status, r.Body)
	}
	if s := string(llm.Requests()[n].Chat.Messages[0].Content); strings.Contains(s, "size: M") {
		t.Errorf("the anonymous id still reads a fact that moved to the verified visitor: %q", s)
	}
}

// TestChatAnonymousVisitorContext: an anonymous id names nobody, so the
// tenant's context webhook is told nothing of who writes (nulls, not
// verified), as for a visitor with no id, even without a visitor auth mode.
func TestChatAnonymousVisitorContext(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	ten := b.NewTenant(t, "starter")
	e := newContextEndpoint(t, b.VisitorKey(t, ten.ID))
	b.MustDo(t, 200, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"visitorContextUrl": e.srv.URL + "/context"})
	llm.Push(llmtest.Turn{Text: []string{"Hello."}})
	if r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Hi", "sessionId": "ctx-anon", "anonymousId": newAnonymousID(t)}, webtest.AgentHeaders); r.Status != 200 {
		t.Fatalf("got %d %v", r.Status, r.Body)
	}
	if got := e.last(); got["externalId"] != nil || got["visitorId"] != nil || got["email"] != nil || got["verified"] != false {
		t.Errorf("context query for an anonymous id %v", got)
	}
	if n := b.Count(t, `SELECT count(*) FROM conversations c JOIN visitors v ON v.id = c.visitor_id
		WHERE c.tenant_id = $1 AND c.session_id = 'ctx-anon' AND v.anonymous_key IS NOT NULL`, ten.ID); n != 1 {
		t.Errorf("the conversation is not the anonymous visitor's")
	}
}

// The widget's message resolves its anonymous visitor in the round trip
// that counts it against its address's limit, and only when that count
// lets it in on the tenant's configuration as it is: a refused message, or
// one the checks after the limit refuse, writes no visitor; a known id
// finds its visitor again; a configuration changed since it was kept is
// read again and the message answered on it, counted once, with its one
// visitor.
func TestChatAnonymousResolvedWithItsCount(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	webtest.ManualClock(b) // the counts stay in one minute's window
	ten := b.NewTenant(t, "starter")
	path := "/chat/" + ten.Slug
	minute := func(addr string) int {
		return b.Count(t, `SELECT coalesce(sum(count), 0)::int FROM rate_counters WHERE key = $1`, "chat:ip:min:"+addr)
	}
	visitors := func(anon string) int {
		key := sha256.Sum256([]byte(anon))
		return b.Count(t, `SELECT count(*)::int FROM visitors WHERE tenant_id = $1 AND anonymous_key = $2`, ten.ID, key[:])
	}
	send := func(addr, anon, session string, extra map[string]any) webtest.ChatResponse {
		t.Helper()
		body := map[string]any{"message": "Hello", "sessionId": session, "anonymousId": anon}
		for k, v := range extra {
			body[k] = v
		}
		return b.Chat(t, path, body, map[string]string{"X-Forwarded-For": addr, "X-Agent-Model": "claude-test"})
	}

	addr, anon := webtest.NewChatAddr(), newAnonymousID(t)
	for i, session := range []string{"ar-1", "ar-2"} {
		llm.Push(llmtest.Turn{Text: []string{"Hi."}})
		if r := send(addr, anon, session, nil); r.Status != 200 {
			t.Fatalf("message %d: %d %v", i+1, r.Status, r.Body)
		}
	}
	if n := b.Count(t, `SELECT count(*)::int FROM conversations c JOIN visitors v ON v.id = c.visitor_id
		WHERE c.tenant_id = $1 AND c.session_id IN ('ar-1', 'ar-2') AND v.auth_provider = 'anonymous'`, ten.ID); n != 2 || visitors(anon) != 1 || minute(addr) != 2 {
		t.Fatalf("two messages of one anonymous id: %d conversations of its visitor, %d visitors, minute count %d; want 2, 1, 2",
			n, visitors(anon), minute(addr))
	}

	// A locale too long: refused after the limit's place, with no visitor
	// written for its id.
	long := newAnonymousID(t)
	if r := send(addr, long, "ar-3", map[string]any{"locale": strings.Repeat("x", 36)}); r.Status != 400 || visitors(long) != 0 {
		t.Fatalf("a locale too long: %d %v, %d visitors; want 400 and none", r.Status, r.Body, visitors(long))
	}

	// The caller's own model, of a provider unknown: refused after the
	// limit's place too, with no visitor written.
	badModel := newAnonymousID(t)
	if r := b.Chat(t, path, map[string]any{"message": "Hello", "sessionId": "ar-3b", "anonymousId": badModel},
		map[string]string{"X-Forwarded-For": addr, "X-Agent-Model": "claude-test", "X-LLM-Key": "sk-test", "X-LLM-Provider": "nonesuch"}); r.Status != 400 || visitors(badModel) != 0 {
		t.Fatalf("an unknown model provider: %d %v, %d visitors; want 400 and none", r.Status, r.Body, visitors(badModel))
	}

	// At the limit: 429, no visitor for a new id.
	b.Exec(t, `UPDATE rate_counters SET count = 20 WHERE key = $1`, "chat:ip:min:"+addr)
	refused := newAnonymousID(t)
	if r := send(addr, refused, "ar-4", nil); r.Status != 429 || visitors(refused) != 0 {
		t.Fatalf("at the limit: %d %v, %d visitors; want 429 and none", r.Status, r.Body, visitors(refused))
	}

	// The bot renamed straight in the database: answered on the current
	// configuration, counted once, one visitor.
	other, fresh := webtest.NewChatAddr(), newAnonymousID(t)
	b.Exec(t, `UPDATE tenants SET bot_name = 'Oriane' WHERE id = $1`, ten.ID)
	llm.Push(llmtest.Turn{Text: []string{"Hi."}})
	if r := send(other, fresh, "ar-5", nil); r.Status != 200 {
		t.Fatalf("after a change: %d %v", r.Status, r.Body)
	}
	reqs := llm.Requests()
	if s := string(reqs[len(reqs)-1].Chat.Messages[0].Content); !strings.Contains(s, "Oriane") {
		t.Errorf("the answer's prompt is not the current configuration's: %q", s)
	}
	if minute(other) != 1 || visitors(fresh) != 1 {
		t.Errorf("after a change: minute count %d, %d visitors; want 1 and 1", minute(other), visitors(fresh))
	}
}
