package public_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/web/webtest"
)

// offered reports whether a request to the model offered a tool of this name.
func offered(r llmtest.Received, name string) bool {
	for _, tool := range r.Chat.Tools {
		if tool.Function.Name == name {
			return true
		}
	}
	return false
}

func TestChatVisitorToken(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	ten := b.NewTenant(t, "starter")
	b.Exec(t, `UPDATE tenants SET visitor_auth_mode = 'jwt' WHERE id = $1`, ten.ID)
	key := b.VisitorKey(t, ten.ID)
	path := "/chat/" + ten.Slug
	st, v := b.Do(t, "POST", "/tenants/"+ten.Slug+"/visitors", ten.Token, map[string]any{"externalId": "ext-42", "displayName": "Ada"})
	if st != 201 && st != 200 {
		t.Fatalf("visitor: %d %v", st, v)
	}
	vid := v["id"].(string)
	if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/visitors/"+vid+"/memory", ten.Token,
		map[string]any{"key": "favourite_colour", "value": "teal"}); st != 200 && st != 201 {
		t.Fatalf("memory: %d %v", st, body)
	}
	if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/tools", ten.Token, map[string]any{
		"name": "Remember", "description": "Keep facts", "type": "REMEMBER_FACT"}); st != 201 {
		t.Fatalf("tool: %d %v", st, body)
	}
	exp := func(d time.Duration) int64 { return time.Now().Add(d).Unix() }
	valid := webtest.SignVisitor(t, jwt.SigningMethodHS256, key, jwt.MapClaims{"sub": "ext-42", "email": "ada@example.com", "name": "Ada L.", "exp": exp(5 * time.Minute)})

	t.Run("Valid", func(t *testing.T) {
		llm.Push(llmtest.Turn{Text: []string{"Hello Ada."}})
		n := len(llm.Requests())
		// The token wins over a visitor id naming someone else.
		r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "tok-1", "visitorId": "someone-else"},
			map[string]string{"X-Visitor-Token": valid, "X-Agent-Model": "m"})
		if r.Status != 200 {
			t.Fatalf("got %d %v", r.Status, r.Body)
		}
		req := llm.Requests()[n]
		if system := string(req.Chat.Messages[0].Content); !strings.Contains(system, "favourite_colour: teal") ||
			!strings.Contains(system, "The visitor's identity is verified.") {
			t.Errorf("verified visitor's memory not in the prompt as verified: %q", system)
		}
		if !offered(req, "remember") {
			t.Errorf("REMEMBER_FACT not offered to a verified visitor")
		}
		if n := b.Count(t, `SELECT count(*) FROM conversations WHERE tenant_id = $1 AND session_id = 'tok-1' AND visitor_id = $2`, ten.ID, vid); n != 1 {
			t.Errorf("conversation not linked to the token's visitor")
		}
		if n := b.Count(t, `SELECT count(*) FROM visitors WHERE id = $1 AND email = 'ada@example.com' AND display_name = 'Ada L.'`, vid); n != 1 {
			t.Errorf("visitor not updated from the claims")
		}
		if n := b.Count(t, `SELECT count(*) FROM visitors WHERE tenant_id = $1 AND external_id = 'someone-else'`, ten.ID); n != 0 {
			t.Errorf("the visitor id was used despite a valid token")
		}
	})

	t.Run("UnverifiedGetsNoMemory", func(t *testing.T) {
		llm.Push(llmtest.Turn{Text: []string{"Hello."}})
		n := len(llm.Requests())
		r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "tok-2"}, map[string]string{"X-Visitor-Id": vid, "X-Agent-Model": "m"})
		if r.Status != 200 {
			t.Fatalf("got %d %v", r.Status, r.Body)
		}
		req := llm.Requests()[n]
		if system := string(req.Chat.Messages[0].Content); strings.Contains(system, "teal") {
			t.Errorf("an id alone got the visitor's memory: %q", system)
		}
		if offered(req, "remember") {
			t.Errorf("REMEMBER_FACT offered to an unverified visitor")
		}
	})

	t.Run("HeaderBeatsBody", func(t *testing.T) {
		llm.Push(llmtest.Turn{Text: []string{"Hello."}})
		r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "tok-3", "visitorToken": "not-a-token"},
			map[string]string{"X-Visitor-Token": valid, "X-Agent-Model": "m"})
		if r.Status != 200 {
			t.Fatalf("got %d %v", r.Status, r.Body)
		}
		r = b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "tok-3", "visitorToken": valid},
			map[string]string{"X-Visitor-Token": "not-a-token", "X-Agent-Model": "m"})
		if r.Status != 401 || r.Body["error"] != "Invalid visitor token: malformed token" {
			t.Errorf("got %d %v", r.Status, r.Body)
		}
	})

	t.Run("NewVisitorFromToken", func(t *testing.T) {
		llm.Push(llmtest.Turn{Text: []string{"Welcome."}})
		tok := webtest.SignVisitor(t, jwt.SigningMethodHS256, key, jwt.MapClaims{"sub": "ext-new", "exp": exp(time.Minute)})
		r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "tok-4", "visitorToken": tok}, webtest.AgentHeaders)
		if r.Status != 200 {
			t.Fatalf("got %d %v", r.Status, r.Body)
		}
		if n := b.Count(t, `SELECT count(*) FROM visitors WHERE tenant_id = $1 AND external_id = 'ext-new'`, ten.ID); n != 1 {
			t.Errorf("visitor of the token not created")
		}
	})

	otherKey := []byte("0123456789abcdef0123456789abcdef")
	noneTok := webtest.SignVisitor(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, jwt.MapClaims{"sub": "ext-42", "exp": exp(time.Minute)})
	cases := []struct {
		name, token, err string
	}{
		{"Expired", webtest.SignVisitor(t, jwt.SigningMethodHS256, key, jwt.MapClaims{"sub": "ext-42", "exp": exp(-2 * time.Minute)}), "Invalid visitor token: token expired"},
		{"WrongKey", webtest.SignVisitor(t, jwt.SigningMethodHS256, otherKey, jwt.MapClaims{"sub": "ext-42", "exp": exp(time.Minute)}),
			"Invalid visitor token: signature does not match the tenant's visitor signing key"},
		{"AlgNone", noneTok, `Invalid visitor token: algorithm must be HS256, not "none"`},
		{"HS512", webtest.SignVisitor(t, jwt.SigningMethodHS512, key, jwt.MapClaims{"sub": "ext-42", "exp": exp(time.Minute)}), `Invalid visitor token: algorithm must be HS256, not "HS512"`},
		{"MissingSub", webtest.SignVisitor(t, jwt.SigningMethodHS256, key, jwt.MapClaims{"exp": exp(time.Minute)}), "Invalid visitor token: sub claim (the visitor's externalId) is required"},
		{"MissingExp", webtest.SignVisitor(t, jwt.SigningMethodHS256, key, jwt.MapClaims{"sub": "ext-42"}), "Invalid visitor token: exp claim is required"},
		{"Garbage", "abc.def.ghi", "Invalid visitor token: malformed token"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "bad-" + tc.name}, map[string]string{"X-Visitor-Token": tc.token, "X-Agent-Model": "m"})
			if r.Status != 401 || r.Body["error"] != tc.err {
				t.Errorf("got %d %v, want 401 %q", r.Status, r.Body, tc.err)
			}
			if strings.Contains(r.Body["error"].(string), tc.token) {
				t.Errorf("the token was echoed")
			}
		})
	}
	t.Run("WithinLeeway", func(t *testing.T) {
		llm.Push(llmtest.Turn{Text: []string{"Hello."}})
		tok := webtest.SignVisitor(t, jwt.SigningMethodHS256, key, jwt.MapClaims{"sub": "ext-42", "exp": exp(-10 * time.Second)})
		if r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "tok-5"}, map[string]string{"X-Visitor-Token": tok, "X-Agent-Model": "m"}); r.Status != 200 {
			t.Errorf("got %d %v", r.Status, r.Body)
		}
	})
}

func TestChatVisitorMemoryWithoutAuthMode(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	ten := b.NewTenant(t, "starter")
	st, v := b.Do(t, "POST", "/tenants/"+ten.Slug+"/visitors", ten.Token, map[string]any{"externalId": "ext-1"})
	if st != 201 && st != 200 {
		t.Fatalf("visitor: %d %v", st, v)
	}
	if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/visitors/"+v["id"].(string)+"/memory", ten.Token,
		map[string]any{"key": "city", "value": "Oslo"}); st != 200 && st != 201 {
		t.Fatalf("memory: %d %v", st, body)
	}
	llm.Push(llmtest.Turn{Text: []string{"Hello."}})
	r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Hi", "sessionId": "m-1", "visitorId": "ext-1"}, webtest.AgentHeaders)
	if r.Status != 200 {
		t.Fatalf("got %d %v", r.Status, r.Body)
	}
	if system := string(llm.Requests()[0].Chat.Messages[0].Content); !strings.Contains(system, "city: Oslo") {
		t.Errorf("without visitorAuthMode an id gets the memory: %q", system)
	}
}

func TestChatCallerLLM(t *testing.T) {
	t.Parallel()
	b, managed := webtest.SetupChat(t, nil)
	ten := b.NewTenant(t, "starter")
	path := "/chat/" + ten.Slug
	caller := llmtest.NewOpenAI(t, llmtest.Turn{Text: []string{"From ", "your model."}}, llmtest.Turn{Text: []string{"Streamed."}})
	hdr := map[string]string{"X-Agent-Model": "m", "X-LLM-Key": "sk-caller-secret", "X-LLM-Model": "caller-model", "X-LLM-Base-Url": caller.URL}
	r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "byo-1"}, hdr)
	if r.Status != 200 || r.Body["message"] != "From your model." || r.Body["llmSource"] != "managed" ||
		r.Body["llmProvider"] != "openai" || r.Body["llmModel"] != "caller-model" {
		t.Fatalf("got %d %v", r.Status, r.Body)
	}
	reqs := caller.Requests()
	if len(reqs) != 1 || reqs[0].Header.Get("Authorization") != "Bearer sk-caller-secret" || reqs[0].Chat.Model != "caller-model" {
		t.Fatalf("caller's provider got %d requests: %+v", len(reqs), reqs)
	}
	if n := len(managed.Requests()); n != 0 {
		t.Errorf("the managed provider got %d requests", n)
	}

	// X-API-Key is the caller's LLM key on /chat; SSE carries the same fields.
	r = b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "byo-2", "stream": true},
		map[string]string{"X-API-Key": "sk-other", "X-LLM-Provider": "OpenAI", "X-LLM-Model": "caller-model", "X-LLM-Base-Url": caller.URL})
	if len(r.Events) == 0 {
		t.Fatalf("got %d %v", r.Status, r.Body)
	}
	last := r.Events[len(r.Events)-1]
	if last["done"] != true || last["llmModel"] != "caller-model" || last["llmSource"] != "managed" {
		t.Errorf("final event %v", last)
	}
	if reqs := caller.Requests(); len(reqs) != 2 || reqs[1].Header.Get("Authorization") != "Bearer sk-other" {
		t.Errorf("X-API-Key not passed through")
	}
	if n := len(managed.Requests()); n != 0 {
		t.Errorf("the managed provider got %d requests", n)
	}
	if n := b.Count(t, `SELECT count(*) FROM messages WHERE tenant_id = $1 AND content LIKE '%sk-caller%'`, ten.ID); n != 0 {
		t.Errorf("the key was stored")
	}

	cases := []struct {
		name    string
		headers map[string]string
		err     string
	}{
		{"UnknownProvider", map[string]string{"X-LLM-Key": "k", "X-LLM-Provider": "mistral", "X-LLM-Model": "x"}, `Unknown X-LLM-Provider "mistral": use openai or anthropic`},
		{"KeyWithoutModel", map[string]string{"X-LLM-Key": "k"}, "X-LLM-Model is required with X-LLM-Key"},
		{"PrivateBaseURL", map[string]string{"X-LLM-Key": "k", "X-LLM-Model": "x", "X-LLM-Base-Url": "https://10.1.2.3/v1"}, "X-LLM-Base-Url refused: 10.1.2.3 is a private or reserved address"},
		{"PlainHTTP", map[string]string{"X-LLM-Key": "k", "X-LLM-Model": "x", "X-LLM-Base-Url": "http://10.1.2.3/v1"}, "X-LLM-Base-Url must use https"},
		{"NotAURL", map[string]string{"X-LLM-Key": "k", "X-LLM-Model": "x", "X-LLM-Base-Url": "ftp://x"}, "X-LLM-Base-Url must be an absolute https URL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.headers["X-Agent-Model"] = "m"
			r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": "byo-" + tc.name}, tc.headers)
			if r.Status != 400 || r.Body["error"] != tc.err {
				t.Errorf("got %d %v, want 400 %q", r.Status, r.Body, tc.err)
			}
		})
	}
}

func TestChatSessionSerialized(t *testing.T) {
	t.Parallel()
	llm, slowURL := slowModel(t, 500*time.Millisecond)
	b, _ := webtest.SetupChat(t, map[string]string{"PARLEY_LLM_BASE_URL": slowURL})
	ten := b.NewTenant(t, "starter")
	path := "/chat/" + ten.Slug
	llm.Push(llmtest.Turn{Text: []string{"Answer A."}}, llmtest.Turn{Text: []string{"Answer B."}}, llmtest.Turn{Text: []string{"Answer C."}})

	var wg sync.WaitGroup
	var first, second, other webtest.ChatResponse
	var firstDone, otherDone time.Time
	wg.Add(3)
	go func() {
		defer wg.Done()
		first = b.Chat(t, path, map[string]any{"message": "slow one", "sessionId": "ser-1"}, webtest.AgentHeaders)
		firstDone = time.Now()
	}()
	waitSessionStarted(t, b, ten.ID, "ser-1")
	go func() {
		defer wg.Done()
		second = b.Chat(t, path, map[string]any{"message": "two", "sessionId": "ser-1"}, webtest.AgentHeaders)
	}()
	go func() {
		defer wg.Done()
		other = b.Chat(t, path, map[string]any{"message": "other", "sessionId": "ser-2"}, webtest.AgentHeaders)
		otherDone = time.Now()
	}()
	wg.Wait()
	for _, r := range []webtest.ChatResponse{first, second, other} {
		if r.Status != 200 || r.Body["message"] == "" {
			t.Fatalf("got %d %v", r.Status, r.Body)
		}
	}
	if !otherDone.Before(firstDone) {
		t.Errorf("another session waited for ser-1's turn")
	}
	if second.Body["messageCount"] != float64(4) {
		t.Errorf("second answer's messageCount %v", second.Body["messageCount"])
	}
	rows, err := b.DB.Pool().Query(context.Background(), `SELECT m.role, m.content FROM messages m JOIN conversations c ON c.id = m.conversation_id
		WHERE c.tenant_id = $1 AND c.session_id = 'ser-1' ORDER BY m.seq`, ten.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var role, content string
		if err := rows.Scan(&role, &content); err != nil {
			t.Fatal(err)
		}
		got = append(got, role+":"+content)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	want := []string{"user:slow one", "assistant:" + first.Body["message"].(string), "user:two", "assistant:" + second.Body["message"].(string)}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("stored messages %q, want %q", got, want)
	}
	if n := b.Count(t, `SELECT count(*) FROM session_leases WHERE tenant_id = $1`, ten.ID); n != 0 {
		t.Errorf("%d leases left behind", n)
	}
}

func TestChatSessionBusy(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	ten := b.NewTenant(t, "starter")
	// A lease held elsewhere, expired: taken over at once.
	b.Exec(t, `INSERT INTO session_leases (tenant_id, session_id, holder, busy_until) VALUES ($1, 'busy-1', 'crashed', now() - interval '1 second')`, ten.ID)
	llm.Push(llmtest.Turn{Text: []string{"Hello."}})
	if r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Hi", "sessionId": "busy-1"}, webtest.AgentHeaders); r.Status != 200 {
		t.Errorf("expired lease: got %d %v", r.Status, r.Body)
	}
	// A live lease held past the wait: 409, nothing stored.
	b.Srv.Base.Engine.SessionWait = 300 * time.Millisecond
	b.Exec(t, `INSERT INTO session_leases (tenant_id, session_id, holder, busy_until) VALUES ($1, 'busy-2', 'other', now() + interval '1 minute')`, ten.ID)
	r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Hi", "sessionId": "busy-2"}, webtest.AgentHeaders)
	if r.Status != 409 || r.Body["error"] != "Another message of this session is still being answered; retry shortly" {
		t.Errorf("busy session: got %d %v", r.Status, r.Body)
	}
	if n := b.Count(t, `SELECT count(*) FROM conversations WHERE tenant_id = $1 AND session_id = 'busy-2'`, ten.ID); n != 0 {
		t.Errorf("a refused message started a conversation")
	}
	if n := b.Count(t, `SELECT count(*) FROM session_leases WHERE tenant_id = $1 AND session_id = 'busy-2' AND holder = 'other'`, ten.ID); n != 1 {
		t.Errorf("the other holder's lease was touched")
	}
}
