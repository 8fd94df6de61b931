package public_test

import (
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/agent/tools"
	"github.com/parley/parley/mail/mailtest"
	"github.com/parley/parley/web/webtest"
)

var sixDigits = regexp.MustCompile(`\b[0-9]{6}\b`)

// codeIn is the code of a verification email.
func codeIn(t *testing.T, m mailtest.Message) string {
	t.Helper()
	_, body, ok := strings.Cut(string(m.Data), "\r\n\r\n")
	code := sixDigits.FindString(body)
	if !ok || code == "" {
		t.Fatalf("no code in the email:\n%s", m.Data)
	}
	return code
}

// Visitor verification by email code: the code goes out through SMTP, is
// tried at most 5 times, expires, is not resent within a minute (per
// conversation and per address), and once right makes the conversation the
// verified visitor's: their memory is in the next message's prompt. Another
// tenant's visitor with the same email is not touched.
func TestChatVisitorCode(t *testing.T) {
	t.Parallel()
	smtp := mailtest.Start(t, mailtest.Options{})
	b, llm := webtest.SetupChat(t, map[string]string{"PARLEY_SMTP_URL": smtp.URL("Parley <no-reply@parley.test>")})
	var skew atomic.Int64
	b.Srv.Base.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }

	ten := b.NewTenant(t, "starter")
	other := b.NewTenant(t, "starter")
	b.Exec(t, `UPDATE tenants SET visitor_auth_mode = 'otp' WHERE id IN ($1, $2)`, ten.ID, other.ID)
	path := "/chat/" + ten.Slug
	ada := b.MustDo(t, 201, "POST", "/tenants/"+ten.Slug+"/visitors", ten.Token, map[string]any{"email": "ada@example.com"})["id"].(string)
	b.MustDo(t, 200, "POST", "/tenants/"+ten.Slug+"/visitors/"+ada+"/memory", ten.Token, map[string]any{"key": "favourite_colour", "value": "teal"})
	twin := b.MustDo(t, 201, "POST", "/tenants/"+other.Slug+"/visitors", other.Token, map[string]any{"email": "ada@example.com"})["id"].(string)
	b.MustDo(t, 200, "POST", "/tenants/"+other.Slug+"/visitors/"+twin+"/memory", other.Token, map[string]any{"key": "secret", "value": "other-tenant"})
	b.MustDo(t, 201, "POST", "/tenants/"+ten.Slug+"/tools", ten.Token, map[string]any{"name": "Remember", "description": "Keep facts", "type": "REMEMBER_FACT"})

	// turn sends one message of session whose model calls the tools, and
	// returns the model's second request (which carries the tool results).
	turn := func(t *testing.T, session string, calls ...llmtest.ToolCall) llmtest.Received {
		t.Helper()
		llm.Push(llmtest.Turn{ToolCalls: calls}, llmtest.Turn{Text: []string{"OK."}})
		n := len(llm.Requests())
		r := b.Chat(t, path, map[string]any{"message": "Hi", "sessionId": session}, map[string]string{"X-Agent-Model": "m"})
		if r.Status != 200 {
			t.Fatalf("got %d %v", r.Status, r.Body)
		}
		reqs := llm.Requests()
		if len(reqs) != n+2 {
			t.Fatalf("%d model requests, want 2", len(reqs)-n)
		}
		return reqs[n+1]
	}

	first := turn(t, "otp-a", webtest.Call("c1", "send_verification_code", `{"email":"Ada@Example.com"}`))
	if !offered(first, "send_verification_code") || !offered(first, "verify_visitor_code") || offered(first, "remember") {
		t.Fatalf("tools offered to an anonymous visitor under otp: %v", first.Chat.Tools)
	}
	if res := webtest.ToolResults(first); len(res) != 1 || !strings.Contains(res[0], `"sent":true`) {
		t.Fatalf("send result %q", res)
	}
	code := codeIn(t, smtp.Wait(t, "ada@example.com", 1, 5*time.Second))
	if n := b.Count(t, `SELECT count(*) FROM verification_codes WHERE position($1::bytea IN code_hash) > 0 OR email <> 'ada@example.com'`, []byte(code)); n != 0 {
		t.Errorf("the code is stored as it is")
	}

	t.Run("ResendThrottled", func(t *testing.T) {
		res := webtest.ToolResults(turn(t, "otp-a", webtest.Call("c1", "send_verification_code", `{"email":"ada@example.com"}`)))
		if len(res) != 1 || !strings.Contains(res[0], `"retryAfterSeconds"`) || !strings.Contains(res[0], `"success":false`) {
			t.Errorf("second send within a minute: %q", res)
		}
		// Another conversation to the same address is throttled too.
		res = webtest.ToolResults(turn(t, "otp-b", webtest.Call("c1", "send_verification_code", `{"email":"ADA@example.com"}`)))
		if len(res) != 1 || !strings.Contains(res[0], `"retryAfterSeconds"`) {
			t.Errorf("send to the same address from another conversation: %q", res)
		}
		if n := len(smtp.To("ada@example.com")); n != 1 {
			t.Errorf("%d emails sent, want 1", n)
		}
	})

	t.Run("WrongCodeSixthRefused", func(t *testing.T) {
		wrong := string(rune('0'+(code[0]-'0'+1)%10)) + code[1:]
		var calls []llmtest.ToolCall
		for i := range 6 {
			calls = append(calls, webtest.Call("w"+string(rune('0'+i)), "verify_visitor_code", `{"code":"`+wrong+`"}`))
		}
		res := webtest.ToolResults(turn(t, "otp-a", calls...))
		if len(res) != 6 || !strings.Contains(res[0], "4 tries left") || !strings.Contains(res[4], "last try") ||
			!strings.Contains(res[5], "used up") {
			t.Fatalf("results %q", res)
		}
		// The right code is refused too now: the tries are spent.
		res = webtest.ToolResults(turn(t, "otp-a", webtest.Call("r1", "verify_visitor_code", `{"code":"`+code+`"}`)))
		if !strings.Contains(res[0], "used up") {
			t.Errorf("right code after 5 wrong tries: %q", res)
		}
	})

	t.Run("ExpiredCode", func(t *testing.T) {
		skew.Add(int64(61 * time.Second))
		turn(t, "otp-c", webtest.Call("c1", "send_verification_code", `{"email":"bob@example.com"}`))
		bob := codeIn(t, smtp.Wait(t, "bob@example.com", 1, 5*time.Second))
		skew.Add(int64(tools.CodeTTL + time.Second))
		res := webtest.ToolResults(turn(t, "otp-c", webtest.Call("c1", "verify_visitor_code", `{"code":"`+bob+`"}`)))
		if !strings.Contains(res[0], "expired") || !strings.Contains(res[0], `"success":false`) {
			t.Errorf("expired code: %q", res)
		}
	})

	t.Run("SuccessLoadsMemoryNextMessage", func(t *testing.T) {
		skew.Add(int64(61 * time.Second))
		turn(t, "otp-a", webtest.Call("c1", "send_verification_code", `{"email":"ada@example.com"}`))
		code := codeIn(t, smtp.Wait(t, "ada@example.com", 2, 5*time.Second))
		res := webtest.ToolResults(turn(t, "otp-a", webtest.Call("c1", "verify_visitor_code", `{"code":"`+code[:3]+" "+code[3:]+`"}`)))
		if !strings.Contains(res[0], `"verified":true`) {
			t.Fatalf("right code: %q", res)
		}
		if n := b.Count(t, `SELECT count(*) FROM tool_history WHERE input::text LIKE '%'||$1||'%'`, code); n != 0 {
			t.Errorf("the tool history keeps the code")
		}
		llm.Push(llmtest.Turn{Text: []string{"Teal, I remember."}})
		n := len(llm.Requests())
		r := b.Chat(t, path, map[string]any{"message": "What is my favourite colour?", "sessionId": "otp-a"}, map[string]string{"X-Agent-Model": "m"})
		if r.Status != 200 {
			t.Fatalf("got %d %v", r.Status, r.Body)
		}
		req := llm.Requests()[n]
		system := string(req.Chat.Messages[0].Content)
		if !strings.Contains(system, "favourite_colour: teal") || !strings.Contains(system, "The visitor's identity is verified.") {
			t.Errorf("the verified visitor's memory is not in the next prompt: %q", system)
		}
		if strings.Contains(system, "other-tenant") {
			t.Errorf("another tenant's memory in the prompt")
		}
		if !offered(req, "remember") || offered(req, "send_verification_code") {
			t.Errorf("tools after verification: %v", req.Chat.Tools)
		}
		if n := b.Count(t, `SELECT count(*) FROM conversations WHERE tenant_id = $1 AND session_id = 'otp-a' AND visitor_id = $2 AND verified_visitor_id = $2 AND verified_by = 'code'`, ten.ID, ada); n != 1 {
			t.Errorf("the conversation is not linked to the verified visitor")
		}
		if n := b.Count(t, `SELECT count(*) FROM conversations WHERE visitor_id = $1 OR verified_visitor_id = $1`, twin); n != 0 {
			t.Errorf("another tenant's visitor with the same email was linked")
		}
		if n := b.Count(t, `SELECT count(*) FROM visitors WHERE lower(email) = 'ada@example.com' AND tenant_id IN ($1, $2)`, ten.ID, other.ID); n != 2 {
			t.Errorf("%d visitors with the email, want the two tenants' own", n)
		}
	})

	t.Run("MailRefused", func(t *testing.T) {
		smtp.RejectNext(1)
		res := webtest.ToolResults(turn(t, "otp-e", webtest.Call("c1", "send_verification_code", `{"email":"dave@example.com"}`)))
		if len(res) != 1 || !strings.Contains(res[0], `"sent":false`) || !strings.Contains(res[0], "did not accept") {
			t.Fatalf("refused mail: %q", res)
		}
		// A code nobody got throttles nothing: asking again sends one.
		res = webtest.ToolResults(turn(t, "otp-e", webtest.Call("c1", "send_verification_code", `{"email":"dave@example.com"}`)))
		if !strings.Contains(res[0], `"sent":true`) {
			t.Errorf("send after a refused mail: %q", res)
		}
		smtp.Wait(t, "dave@example.com", 1, 5*time.Second)
	})

	t.Run("NewVisitorCreated", func(t *testing.T) {
		skew.Add(int64(61 * time.Second))
		turn(t, "otp-d", webtest.Call("c1", "send_verification_code", `{"email":"carol@example.com"}`))
		code := codeIn(t, smtp.Wait(t, "carol@example.com", 1, 5*time.Second))
		turn(t, "otp-d", webtest.Call("c1", "verify_visitor_code", `{"code":"`+code+`"}`))
		if n := b.Count(t, `SELECT count(*) FROM visitors v JOIN conversations c ON c.visitor_id = v.id
			WHERE v.tenant_id = $1 AND v.email = 'carol@example.com' AND c.session_id = 'otp-d'`, ten.ID); n != 1 {
			t.Errorf("no visitor created for a verified new email")
		}
	})
}

// Without PARLEY_SMTP_URL no code can be sent: the code tools are not
// offered, and the developer settings say what the operator must set.
func TestChatVisitorCodeWithoutSMTP(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	ten := b.NewTenant(t, "starter")
	b.Exec(t, `UPDATE tenants SET visitor_auth_mode = 'all' WHERE id = $1`, ten.ID)
	llm.Push(llmtest.Turn{Text: []string{"Hello."}})
	n := len(llm.Requests())
	if r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Hi", "sessionId": "s"}, map[string]string{"X-Agent-Model": "m"}); r.Status != 200 {
		t.Fatalf("got %d %v", r.Status, r.Body)
	}
	if req := llm.Requests()[n]; offered(req, "send_verification_code") || offered(req, "verify_visitor_code") {
		t.Errorf("code tools offered without SMTP")
	}
}
