package voice_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/web/webtest"
)

func fixture(t *testing.T, name string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile("testdata/vapi/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// withCall sets the call id of an event fixture.
func withCall(ev map[string]any, callID string) map[string]any {
	ev["message"].(map[string]any)["call"].(map[string]any)["id"] = callID
	return ev
}

const voiceConfigEN = `{"language": "en-US", "firstMessage": "Hello, Acme Plumbing, how can I help?", "voiceId": "voice-1",
	"endCallPhrases": ["goodbye"], "maxCallDuration": 600}`

// TestVoiceOpenAIClient is the orchestrator's view of Parley: the official
// OpenAI client, pointed at /voice/{slug} as its base URL, streams a reply
// and gets one without streaming. The reply is in spoken form, the model
// got the voice prompt and only the voice tools, and the orchestrator's
// history.
func TestVoiceOpenAIClient(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	ten, secret := b.VoiceTenant(t, "scale", true, voiceConfigEN)
	for _, tool := range []map[string]any{
		{"name": "Contact form", "description": "Collect a lead", "type": "SUBMIT_FORM", "config": map[string]any{"fields": []any{
			map[string]any{"name": "name", "label": "Name", "type": "text", "required": true}}}},
		{"name": "Quote", "description": "Price a job", "type": "GENERATE_QUOTE", "config": map[string]any{"currency": "EUR", "items": []any{
			map[string]any{"name": "Visit", "unitPrice": 80}}}},
		{"name": "Human", "description": "Hand over", "type": "ESCALATE_TO_HUMAN", "config": map[string]any{}},
	} {
		if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/tools", ten.Token, tool); st != 201 {
			t.Fatalf("tool: %d %v", st, body)
		}
	}
	llm.Push(
		llmtest.Turn{Text: []string{"**Yes!** Tuesday 2026-11-", "24 at 9:30 am is free 🎉. It costs $80", ".50 in total."}},
		llmtest.Turn{Text: []string{"Call us at +1 415 555 0100."}},
	)
	client := openai.NewClient(option.WithBaseURL(b.TS.URL+"/voice/"+ten.Slug), option.WithAPIKey(secret),
		option.WithHTTPClient(b.TS.Client()), option.WithMaxRetries(0))
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{Model: "parley", Messages: []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage("You are the assistant of Acme Plumbing."),
		openai.AssistantMessage("Hello, Acme Plumbing, how can I help?"),
		openai.UserMessage("Can someone come on Tuesday morning?"),
	}}
	stream := client.Chat.Completions.NewStreaming(ctx, params, option.WithJSONSet("call", map[string]any{"id": "call-openai-1"}))
	var acc openai.ChatCompletionAccumulator
	chunks := 0
	for stream.Next() {
		acc.AddChunk(stream.Current())
		chunks++
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	want := "Yes! Tuesday November twenty-fourth, twenty twenty-six at nine thirty a.m. is free. It costs eighty dollars and fifty cents in total."
	if got := acc.Choices[0].Message.Content; got != want || chunks < 4 {
		t.Errorf("streamed in %d chunks:\n got %q\nwant %q", chunks, got, want)
	}

	reply, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if got := reply.Choices[0].Message.Content; got != "Call us at plus one, four one five, five five five, zero one zero zero." || reply.Object != "chat.completion" {
		t.Errorf("completion: %+v", reply)
	}

	reqs := llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model calls: %d", len(reqs))
	}
	first := reqs[0].Chat
	system := string(first.Messages[0].Content)
	if !strings.Contains(system, "## Speaking on the phone") || strings.Contains(system, "You are the assistant of Acme Plumbing.") {
		t.Errorf("system prompt: the voice instruction, not the orchestrator's prompt, was expected: %q", system)
	}
	var tools []string
	for _, tl := range first.Tools {
		tools = append(tools, tl.Function.Name)
	}
	if strings.Join(tools, ",") != "contact_form,human" {
		t.Errorf("voice tools offered: %v, want contact_form and human only", tools)
	}
	if len(first.Messages) != 3 || first.Messages[1].Role != "assistant" || string(first.Messages[1].Content) != "Hello, Acme Plumbing, how can I help?" ||
		string(first.Messages[2].Content) != "Can someone come on Tuesday morning?" {
		t.Errorf("history sent to the model: %+v", first.Messages)
	}
	// Both requests were one call each (the second had no call id): two
	// voice conversations, each with the caller's message and the reply.
	if n := b.Count(t, `SELECT count(*) FROM conversations WHERE tenant_id = $1 AND channel = 'voice' AND message_count = 2`, ten.ID); n != 2 {
		t.Errorf("voice conversations: %d", n)
	}
	if n := b.Count(t, `SELECT count(*) FROM voice_calls WHERE tenant_id = $1 AND call_id = 'call-openai-1' AND conversation_id IS NOT NULL`, ten.ID); n != 1 {
		t.Errorf("the call is not linked to its conversation: %d", n)
	}
}

// TestVoiceCallEndToEnd runs a call as the orchestrator does, with its
// payloads: assistant-request, three custom LLM turns (the second submits
// a form through a tool call), status updates and the end-of-call report.
// The conversation (channel voice) then shows its call in the
// conversations API, and the submission has channel voice and a webhook
// delivery.
func TestVoiceCallEndToEnd(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	b.WithOutbound(t, true, webtest.WebhookHosts)
	ten, secret := b.VoiceTenant(t, "scale", true, voiceConfigEN)
	auth := webtest.VoiceBearer(secret)
	api := "/tenants/" + ten.Slug
	if st, body := b.Do(t, "POST", api+"/tools", ten.Token, map[string]any{
		"name": "Contact form", "description": "Take the caller's details", "type": "SUBMIT_FORM",
		"config": map[string]any{"fields": []any{
			map[string]any{"name": "name", "label": "Name", "type": "text", "required": true},
			map[string]any{"name": "phone", "label": "Phone", "type": "phone", "required": true},
			map[string]any{"name": "problem", "label": "Problem", "type": "text"},
		}}}); st != 201 {
		t.Fatalf("tool: %d %v", st, body)
	}
	st, hook := b.Do(t, "POST", api+"/webhooks", ten.Token, map[string]any{"url": "https://public.test/leads", "events": []string{"submission.created"}})
	if st != 201 {
		t.Fatalf("webhook: %d %v", st, hook)
	}
	const callID = "c8a0e2f4-1b2c-4d5e-8f90-123456789abc"

	// The call starts: the assistant comes from voiceConfig.
	r := b.VoicePost(t, "/voice/"+ten.Slug+"/events", auth, fixture(t, "assistant-request.json"))
	a, _ := r.Body["assistant"].(map[string]any)
	model, _ := a["model"].(map[string]any)
	server, _ := a["server"].(map[string]any)
	base := b.Srv.Config.BaseURL + "/voice/" + ten.Slug
	if r.Status != 200 || a["firstMessage"] != "Hello, Acme Plumbing, how can I help?" || model["provider"] != "custom-llm" || model["url"] != base ||
		server["url"] != base+"/events" || a["maxDurationSeconds"] != float64(600) || a["transcriber"].(map[string]any)["language"] != "en" ||
		server["secret"] != secret || model["headers"].(map[string]any)["X-Vapi-Secret"] != secret {
		t.Fatalf("assistant-request: %d %v", r.Status, r.Body)
	}
	status := fixture(t, "status-update.json")
	status["message"].(map[string]any)["status"] = "in-progress"
	delete(status["message"].(map[string]any), "endedReason")
	if r := b.VoicePost(t, "/voice/"+ten.Slug+"/events", auth, status); r.Status != 200 {
		t.Fatalf("status-update: %d %v", r.Status, r.Body)
	}

	// Three turns, the orchestrator's messages growing with the call.
	llm.Push(
		llmtest.Turn{Text: []string{"Yes, Tuesday at 9:00 is free. ", "May I have your name and number?"}},
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "tc_1", Name: "contact_form",
			Arguments: []string{`{"name":"Jeanne Martin","phone":"+33612345678",`, `"problem":"leaking tap"}`}}}},
		llmtest.Turn{Text: []string{"Thank you Jeanne, we will call you on 06 12 34 56 78."}},
		llmtest.Turn{Text: []string{"Goodbye!"}},
	)
	// The fixture's system prompt and first message, then the turns.
	req := fixture(t, "custom-llm-request.json")
	msgs := req["messages"].([]any)[:2]
	turn := func(user string) string {
		t.Helper()
		msgs = append(msgs, map[string]any{"role": "user", "content": user})
		req["messages"] = msgs
		said := b.VoicePost(t, "/voice/"+ten.Slug+"/chat/completions", map[string]string{"X-Vapi-Secret": secret}, req).Spoken(t)
		msgs = append(msgs, map[string]any{"role": "assistant", "content": said})
		return said
	}
	if said := turn("Can someone come on Tuesday morning?"); said != "Yes, Tuesday at nine o'clock is free. May I have your name and number?" {
		t.Errorf("turn 1: %q", said)
	}
	if said := turn("Jeanne Martin, plus three three six one two three four five six seven eight, it's a leaking tap."); said !=
		"Thank you Jeanne, we will call you on zero six, one two, three four, five six, seven eight." {
		t.Errorf("turn 2: %q", said)
	}
	if said := turn("Thanks, bye."); said != "Goodbye!" {
		t.Errorf("turn 3: %q", said)
	}
	reqs := llm.Requests()
	if len(reqs) != 4 {
		t.Fatalf("model calls: %d", len(reqs))
	}
	last := reqs[3].Chat.Messages
	if len(last) != 7 || string(last[1].Content) != "Hello, Acme Plumbing, how can I help?" || string(last[6].Content) != "Thanks, bye." {
		t.Errorf("the third turn's history: %+v", last)
	}

	// The call ends.
	end := fixture(t, "status-update.json")
	if r := b.VoicePost(t, "/voice/"+ten.Slug+"/events", auth, end); r.Status != 200 {
		t.Fatalf("status-update ended: %d %v", r.Status, r.Body)
	}
	if r := b.VoicePost(t, "/voice/"+ten.Slug+"/events", auth, fixture(t, "end-of-call-report.json")); r.Status != 200 || len(r.Body) != 0 {
		t.Fatalf("end-of-call-report: %d %v", r.Status, r.Body)
	}

	// The conversations API.
	st, list := b.Do(t, "GET", api+"/conversations?channel=voice", ten.Token, nil)
	items, _ := list["conversations"].([]any)
	if st != 200 || len(items) != 1 {
		t.Fatalf("voice conversations: %d %v", st, list)
	}
	convID := items[0].(map[string]any)["id"].(string)
	st, conv := b.Do(t, "GET", api+"/conversations/"+convID, ten.Token, nil)
	call, _ := conv["voiceCall"].(map[string]any)
	if st != 200 || conv["channel"] != "voice" || conv["messageCount"] != float64(6) || call == nil {
		t.Fatalf("conversation: %d %v", st, conv)
	}
	if call["callId"] != callID || call["status"] != "ended" || call["endedReason"] != "customer-ended-call" ||
		call["summary"] != "The caller booked a visit for Tuesday the 24th at 9 am." || !strings.HasPrefix(call["transcript"].(string), "AI: Hello, Acme Plumbing") ||
		call["durationSeconds"] != float64(90) || call["cost"] != 0.12 || call["hasRecording"] != true || call["callerNumber"] != "+33612345678" ||
		call["startedAt"] != "2026-11-21T10:00:00Z" || call["endedAt"] != "2026-11-21T10:01:30Z" {
		t.Errorf("voiceCall: %v", call)
	}
	if raw, _ := json.Marshal(conv); strings.Contains(string(raw), "storage.example") {
		t.Errorf("the recording URL is shown: %s", raw)
	}
	msgsOut := conv["messages"].([]any)
	if m := msgsOut[1].(map[string]any); m["role"] != "assistant" || !strings.HasPrefix(m["content"].(string), "Yes, Tuesday at 9:00 is free.") {
		t.Errorf("stored reply: %v", m)
	}

	// The submission, of channel voice, on the conversation, with its delivery.
	st, subs := b.Do(t, "GET", api+"/submissions?channel=voice", ten.Token, nil)
	sl, _ := subs["submissions"].([]any)
	if st != 200 || len(sl) != 1 {
		t.Fatalf("voice submissions: %d %v", st, subs)
	}
	sub := sl[0].(map[string]any)
	input, _ := sub["input"].(map[string]any)
	if sub["channel"] != "voice" || sub["conversationId"] != convID || input["name"] != "Jeanne Martin" || input["problem"] != "leaking tap" {
		t.Errorf("submission: %v", sub)
	}
	st, ds := b.Do(t, "GET", api+"/webhooks/"+hook["endpoint"].(map[string]any)["id"].(string)+"/deliveries", ten.Token, nil)
	dl, _ := ds["deliveries"].([]any)
	if st != 200 || len(dl) != 1 || dl[0].(map[string]any)["event"] != "submission.created" {
		t.Errorf("deliveries: %d %v", st, ds)
	}
}

// TestVoiceEvents checks each event type with the orchestrator's shapes:
// tool calls nested (arguments an object, or a JSON string) and flat, the
// voice tool set, status updates, unknown types, and a linked assistant.
func TestVoiceEvents(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten, secret := b.VoiceTenant(t, "scale", true, `{}`)
	auth := webtest.VoiceBearer(secret)
	path := "/voice/" + ten.Slug + "/events"
	for _, tool := range []map[string]any{
		{"name": "Submit form", "description": "Take the caller's details", "type": "SUBMIT_FORM", "config": map[string]any{"fields": []any{
			map[string]any{"name": "name", "label": "Name", "type": "text", "required": true},
			map[string]any{"name": "phone", "label": "Phone", "type": "phone"},
			map[string]any{"name": "problem", "label": "Problem", "type": "text"}}}},
		{"name": "Quote", "description": "Price a job", "type": "GENERATE_QUOTE", "config": map[string]any{"currency": "EUR", "items": []any{
			map[string]any{"name": "Visit", "unitPrice": 80}}}},
		{"name": "Human", "description": "Hand over", "type": "ESCALATE_TO_HUMAN", "config": map[string]any{}},
	} {
		if st, body := b.Do(t, "POST", "/tenants/"+ten.Slug+"/tools", ten.Token, tool); st != 201 {
			t.Fatalf("tool: %d %v", st, body)
		}
	}
	result := func(r webtest.VoiceResponse, i int) (string, string, map[string]any) {
		t.Helper()
		res, _ := r.Body["results"].([]any)
		if r.Status != 200 || len(res) <= i {
			t.Fatalf("tool-calls: %d %v", r.Status, r.Body)
		}
		m := res[i].(map[string]any)
		var out map[string]any
		if err := json.Unmarshal([]byte(m["result"].(string)), &out); err != nil {
			t.Fatalf("result is not a JSON string: %v", m)
		}
		return m["name"].(string), m["toolCallId"].(string), out
	}

	// Nested, arguments an object: a tool the tenant does not have.
	name, id, out := result(b.VoicePost(t, path, auth, withCall(fixture(t, "tool-calls.json"), "call-ev-1")), 0)
	if name != "check_availability" || id != "call_abc123" || out["success"] != false {
		t.Errorf("unknown tool: %s %s %v", name, id, out)
	}
	// Flat: the form is submitted, with channel voice.
	name, id, out = result(b.VoicePost(t, path, auth, withCall(fixture(t, "tool-calls-flat.json"), "call-ev-1")), 0)
	if name != "submit_form" || id != "call_def456" || out["success"] != true {
		t.Errorf("flat submit_form: %s %s %v", name, id, out)
	}
	// Nested, arguments a JSON string; and a tool voice does not offer.
	r := b.VoicePost(t, path, auth, map[string]any{"message": map[string]any{"type": "tool-calls", "call": map[string]any{"id": "call-ev-1"},
		"toolCallList": []any{
			map[string]any{"id": "t1", "type": "function", "function": map[string]any{"name": "submit_form", "arguments": `{"name":"Paul Durand","phone":"+33198765432"}`}},
			map[string]any{"id": "t2", "type": "function", "function": map[string]any{"name": "quote", "arguments": `{}`}},
		}}})
	if _, id, out := result(r, 0); id != "t1" || out["success"] != true {
		t.Errorf("string arguments: %s %v", id, out)
	}
	if name, _, out := result(r, 1); name != "quote" || out["success"] != false {
		t.Errorf("GENERATE_QUOTE ran on a voice call: %v", out)
	}
	// toolWithToolCallList alone.
	r = b.VoicePost(t, path, auth, map[string]any{"message": map[string]any{"type": "tool-calls", "toolWithToolCallList": []any{
		map[string]any{"name": "submit_form", "toolCall": map[string]any{"id": "t3", "parameters": map[string]any{"name": "Léa"}}}}}})
	if name, id, out := result(r, 0); name != "submit_form" || id != "t3" || out["success"] != true {
		t.Errorf("toolWithToolCallList: %s %s %v", name, id, out)
	}
	if n := b.Count(t, `SELECT count(*) FROM submissions WHERE tenant_id = $1 AND channel = 'voice' AND tool_type = 'SUBMIT_FORM'`, ten.ID); n != 3 {
		t.Errorf("voice submissions: %d", n)
	}
	if n := b.Count(t, `SELECT count(*) FROM events WHERE tenant_id = $1 AND type = 'submission.created'`, ten.ID); n != 3 {
		t.Errorf("submission.created events: %d", n)
	}

	// A call with a conversation (one custom LLM turn, answered here by the
	// local provider): the event's tool runs go into its tool history, and
	// an escalation escalates it.
	if r := b.VoicePost(t, "/voice/"+ten.Slug+"/chat", auth, map[string]any{"call": map[string]any{"id": "call-ev-2"},
		"messages": []any{map[string]any{"role": "user", "content": "Hello"}}}); r.Status != 200 || r.Body["object"] != "chat.completion" {
		t.Fatalf("turn: %d %v", r.Status, r.Body)
	}
	r = b.VoicePost(t, path, auth, map[string]any{"message": map[string]any{"type": "tool-calls", "call": map[string]any{"id": "call-ev-2"},
		"toolCallList": []any{
			map[string]any{"id": "t4", "name": "submit_form", "parameters": map[string]any{"name": "Marc"}},
			map[string]any{"id": "t5", "name": "human", "parameters": map[string]any{"reason": "wants a person"}},
		}}})
	if _, _, out := result(r, 1); out["success"] != true {
		t.Errorf("escalation: %v", out)
	}
	var convID, status string
	var toolCalls int
	if err := b.DB.Pool().QueryRow(context.Background(), `SELECT c.id, c.status, c.tool_calls_count FROM voice_calls v
		JOIN conversations c ON c.id = v.conversation_id WHERE v.tenant_id = $1 AND v.call_id = 'call-ev-2'`, ten.ID).Scan(&convID, &status, &toolCalls); err != nil ||
		status != "ESCALATED" || toolCalls != 2 {
		t.Errorf("the call's conversation after its tool calls: %s %d %v", status, toolCalls, err)
	}
	// The form and the escalation, each a submission of channel voice.
	if n := b.Count(t, `SELECT count(*) FROM submissions WHERE conversation_id = $1 AND channel = 'voice'`, convID); n != 2 {
		t.Errorf("submissions on the call's conversation: %d", n)
	}

	// status-update.
	if r := b.VoicePost(t, path, auth, withCall(fixture(t, "status-update.json"), "call-ev-1")); r.Status != 200 || len(r.Body) != 0 {
		t.Errorf("status-update: %d %v", r.Status, r.Body)
	}
	var st, reason string
	if err := b.DB.Pool().QueryRow(context.Background(), `SELECT status, ended_reason FROM voice_calls WHERE tenant_id = $1 AND call_id = 'call-ev-1'`, ten.ID).
		Scan(&st, &reason); err != nil || st != "ended" || reason != "customer-ended-call" {
		t.Errorf("call after status-update: %s %s %v", st, reason, err)
	}
	// Unknown types are ignored.
	for _, typ := range []string{"speech-update", "transcript", "conversation-update", "hang"} {
		if r := b.VoicePost(t, path, auth, map[string]any{"message": map[string]any{"type": typ, "call": map[string]any{"id": "x"}}}); r.Status != 200 || len(r.Body) != 0 {
			t.Errorf("%s: %d %v", typ, r.Status, r.Body)
		}
	}
	// An empty voiceConfig still gives a working assistant; a linked
	// assistant is named by its id.
	r = b.VoicePost(t, path, auth, fixture(t, "assistant-request.json"))
	if a, _ := r.Body["assistant"].(map[string]any); r.Status != 200 || a["model"] == nil || a["firstMessage"] != nil || a["voice"] != nil {
		t.Errorf("assistant without config: %d %v", r.Status, r.Body)
	}
	b.Exec(t, `UPDATE tenants SET voice_assistant_id = 'asst_456' WHERE id = $1`, ten.ID)
	r = b.VoicePost(t, path, auth, fixture(t, "assistant-request.json"))
	if r.Status != 200 || r.Body["assistantId"] != "asst_456" || len(r.Body) != 1 {
		t.Errorf("linked assistant: %d %v", r.Status, r.Body)
	}
}

// TestVoiceRefusals: every bad request gets the error shape and its
// status, never a 500, on both endpoints.
func TestVoiceRefusals(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	ten, secret := b.VoiceTenant(t, "scale", true, `{"language": "fr-FR"}`)
	off, offSecret := b.VoiceTenant(t, "scale", false, `{}`)
	small, smallSecret := b.VoiceTenant(t, "starter", true, `{}`)
	noSecret := b.NewTenant(t, "scale")
	b.Exec(t, `UPDATE tenants SET voice_enabled = true WHERE id = $1`, noSecret.ID)
	chat := func(slug string) string { return "/voice/" + slug + "/chat" }
	ok := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "Bonjour"}}, "call": map[string]any{"id": "c-1"}}
	event := map[string]any{"message": map[string]any{"type": "status-update", "status": "ringing", "call": map[string]any{"id": "c-1"}}}

	for _, tc := range []struct {
		name    string
		path    string
		headers map[string]string
		body    any
		status  int
		code    string
		field   string
	}{
		{"no secret", chat(ten.Slug), nil, ok, 401, "", ""},
		{"wrong bearer", chat(ten.Slug), webtest.VoiceBearer("wrong"), ok, 401, "", ""},
		{"wrong X-Vapi-Secret", chat(ten.Slug), map[string]string{"X-Vapi-Secret": secret + "x"}, ok, 401, "", ""},
		{"another tenant's secret", chat(ten.Slug), webtest.VoiceBearer(offSecret), ok, 401, "", ""},
		{"basic scheme", chat(ten.Slug), map[string]string{"Authorization": "Basic " + secret}, ok, 401, "", ""},
		{"tenant without a secret", chat(noSecret.Slug), webtest.VoiceBearer(""), ok, 401, "", ""},
		{"unknown slug", chat("no-such-tenant"), webtest.VoiceBearer(secret), ok, 404, "", ""},
		{"plan without voice", chat(small.Slug), webtest.VoiceBearer(smallSecret), ok, 402, "PLAN_REQUIRED", ""},
		{"voice disabled", chat(off.Slug), webtest.VoiceBearer(offSecret), ok, 403, "VOICE_DISABLED", ""},
		{"malformed JSON", chat(ten.Slug), webtest.VoiceBearer(secret), `{"messages": [`, 400, "", ""},
		{"not an object", chat(ten.Slug), webtest.VoiceBearer(secret), `[1]`, 400, "", ""},
		{"empty messages", chat(ten.Slug), webtest.VoiceBearer(secret), map[string]any{"messages": []any{}}, 400, "", "messages"},
		{"no messages", chat(ten.Slug), webtest.VoiceBearer(secret), map[string]any{"stream": true}, 400, "", "messages"},
		{"no user message", chat(ten.Slug), webtest.VoiceBearer(secret), map[string]any{"messages": []any{map[string]any{"role": "system", "content": "x"}}}, 400, "", "messages"},
		{"image only", chat(ten.Slug), webtest.VoiceBearer(secret), map[string]any{"messages": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "https://example.com/a.png"}}}}}}, 400, "", "messages"},
		{"blank user message", chat(ten.Slug), webtest.VoiceBearer(secret), map[string]any{"messages": []any{map[string]any{"role": "user", "content": "  "}}}, 400, "", "messages"},
		{"messages not an array", chat(ten.Slug), webtest.VoiceBearer(secret), map[string]any{"messages": "hi"}, 400, "", "messages"},
		{"stream not a boolean", chat(ten.Slug), webtest.VoiceBearer(secret), map[string]any{"messages": ok["messages"], "stream": "yes"}, 400, "", "stream"},
		{"call id too long", chat(ten.Slug), webtest.VoiceBearer(secret), map[string]any{"messages": ok["messages"], "call": map[string]any{"id": strings.Repeat("c", 201)}}, 400, "", "call"},
		{"events: no secret", "/voice/" + ten.Slug + "/events", nil, event, 401, "", ""},
		{"events: unknown slug", "/voice/no-such-tenant/events", webtest.VoiceBearer(secret), event, 404, "", ""},
		{"events: disabled", "/voice/" + off.Slug + "/events", webtest.VoiceBearer(offSecret), event, 403, "VOICE_DISABLED", ""},
		{"events: malformed", "/voice/" + ten.Slug + "/events", webtest.VoiceBearer(secret), `{"message": {`, 400, "", ""},
		{"events: no message", "/voice/" + ten.Slug + "/events", webtest.VoiceBearer(secret), map[string]any{"type": "status-update"}, 400, "", "message"},
		{"events: no type", "/voice/" + ten.Slug + "/events", webtest.VoiceBearer(secret), map[string]any{"message": map[string]any{}}, 400, "", "message"},
		{"events: no call id", "/voice/" + ten.Slug + "/events", webtest.VoiceBearer(secret), map[string]any{"message": map[string]any{"type": "end-of-call-report"}}, 400, "", "message"},
		{"events: no status", "/voice/" + ten.Slug + "/events", webtest.VoiceBearer(secret), map[string]any{"message": map[string]any{"type": "status-update", "call": map[string]any{"id": "c"}}}, 400, "", "message"},
		{"events: call id too long", "/voice/" + ten.Slug + "/events", webtest.VoiceBearer(secret), map[string]any{"message": map[string]any{"type": "status-update", "status": "ringing", "call": map[string]any{"id": strings.Repeat("é", 201)}}}, 400, "", "message"},
		{"events: too many tool calls", "/voice/" + ten.Slug + "/events", webtest.VoiceBearer(secret), map[string]any{"message": map[string]any{"type": "tool-calls", "toolCallList": slices.Repeat([]any{map[string]any{"id": "t", "name": "x"}}, 21)}}, 400, "", ""},
		{"events: wrong type", "/voice/" + ten.Slug + "/events", webtest.VoiceBearer(secret), map[string]any{"message": map[string]any{"type": "tool-calls", "toolCallList": "x"}}, 400, "", "message"},
	} {
		r := b.VoicePost(t, tc.path, tc.headers, tc.body)
		msg, _ := r.Body["error"].(string)
		if r.Status != tc.status || msg == "" || (tc.code != "" && r.Body["code"] != tc.code) {
			t.Errorf("%s: %d %v, want %d %s", tc.name, r.Status, r.Body, tc.status, tc.code)
			continue
		}
		if details, _ := r.Body["details"].(map[string]any); tc.field != "" && details[tc.field] == nil {
			t.Errorf("%s: details %v do not name %s", tc.name, r.Body["details"], tc.field)
		}
	}
	if n := len(llm.Requests()); n != 0 {
		t.Errorf("a refused request reached the model: %d calls", n)
	}
	// A call id of 200 characters is accepted, counted in characters, not bytes.
	longID := strings.Repeat("é", 200)
	if r := b.VoicePost(t, "/voice/"+ten.Slug+"/events", webtest.VoiceBearer(secret), map[string]any{"message": map[string]any{"type": "status-update", "status": "ringing", "call": map[string]any{"id": longID}}}); r.Status != 200 {
		t.Errorf("events: call id of 200 characters: %d %v", r.Status, r.Body)
	}
	if n := b.Count(t, `SELECT count(*) FROM voice_calls WHERE tenant_id = $1 AND call_id = $2`, ten.ID, longID); n != 1 {
		t.Errorf("events: call id of 200 characters: %d rows", n)
	}
	// 20 tool calls in one event are run (21 are refused above).
	calls := slices.Repeat([]any{map[string]any{"id": "t", "name": "NO_SUCH_TOOL"}}, 20)
	if r := b.VoicePost(t, "/voice/"+ten.Slug+"/events", webtest.VoiceBearer(secret), map[string]any{"message": map[string]any{"type": "tool-calls", "toolCallList": calls}}); r.Status != 200 {
		t.Errorf("events: 20 tool calls: %d %v", r.Status, r.Body)
	} else if results, _ := r.Body["results"].([]any); len(results) != 20 {
		t.Errorf("events: 20 tool calls: %d results", len(results))
	}

	// Another tenant's call id: the same id is a call of each tenant's own,
	// with its own conversation.
	other, otherSecret := b.VoiceTenant(t, "scale", true, `{}`)
	llm.Push(llmtest.Turn{Text: []string{"Bonjour !"}}, llmtest.Turn{Text: []string{"Hello!"}})
	if said := b.VoicePost(t, chat(ten.Slug), webtest.VoiceBearer(secret), map[string]any{"stream": true, "messages": ok["messages"], "call": ok["call"]}).Spoken(t); said != "Bonjour !" {
		t.Errorf("first tenant: %q", said)
	}
	if said := b.VoicePost(t, chat(other.Slug), webtest.VoiceBearer(otherSecret), map[string]any{"stream": true, "messages": []any{map[string]any{"role": "user", "content": "Hi"}}, "call": ok["call"]}).Spoken(t); said != "Hello!" {
		t.Errorf("second tenant: %q", said)
	}
	if n := b.Count(t, `SELECT count(DISTINCT conversation_id) FROM voice_calls WHERE call_id = 'c-1' AND tenant_id IN ($1, $2)`, ten.ID, other.ID); n != 2 {
		t.Errorf("conversations of call c-1 across tenants: %d, want one each", n)
	}
	if n := b.Count(t, `SELECT count(*) FROM conversations WHERE tenant_id = $1 AND channel = 'voice' AND message_count = 2`, ten.ID); n != 1 {
		t.Errorf("the first tenant's conversation was touched by the other's turn: %d", n)
	}
	// An end-of-call report of another tenant's call does not reach it.
	report := withCall(fixture(t, "end-of-call-report.json"), "c-1")
	if r := b.VoicePost(t, "/voice/"+other.Slug+"/events", webtest.VoiceBearer(otherSecret), report); r.Status != 200 {
		t.Fatalf("report: %d %v", r.Status, r.Body)
	}
	if n := b.Count(t, `SELECT count(*) FROM voice_calls WHERE tenant_id = $1 AND call_id = 'c-1' AND summary IS NULL`, ten.ID); n != 1 {
		t.Errorf("another tenant's report reached this tenant's call")
	}
	// The custom LLM takes a call id of 200 characters too (201 are refused above).
	llm.Push(llmtest.Turn{Text: []string{"Oui."}})
	if r := b.VoicePost(t, chat(ten.Slug), webtest.VoiceBearer(secret), map[string]any{"messages": ok["messages"], "call": map[string]any{"id": longID}}); r.Status != 200 {
		t.Errorf("chat: call id of 200 characters: %d %v", r.Status, r.Body)
	}
}

// TestVoiceCallRowRace: the first requests of a call arriving at once
// (the orchestrator's assistant-request and a retry, say) find one row.
func TestVoiceCallRowRace(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.NewTenant(t, "scale")
	ids := make(chan string, 8)
	for range 8 {
		go func() {
			c, err := b.DB.OpenVoiceCall(context.Background(), ten.ID, "race-call", nil)
			if err != nil {
				t.Error(err)
			}
			ids <- c.ID
		}()
	}
	first := <-ids
	for range 7 {
		if id := <-ids; id != first || id == "" {
			t.Errorf("rows %q and %q for one call", first, id)
		}
	}
}

// TestVoiceModelFailure: a model that fails mid-call is spoken as an
// apology in the call's language, and the stream ends as the orchestrator
// expects; without streaming it is a 502.
func TestVoiceModelFailure(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	ten, secret := b.VoiceTenant(t, "scale", true, `{"language": "fr-FR"}`)
	llm.Push(llmtest.Turn{Status: 500, ErrorMessage: "boom"}, llmtest.Turn{Status: 500, ErrorMessage: "boom"})
	body := map[string]any{"stream": true, "messages": []any{map[string]any{"role": "user", "content": "Bonjour"}}}
	if said := b.VoicePost(t, "/voice/"+ten.Slug+"/chat", webtest.VoiceBearer(secret), body).Spoken(t); said != "Désolé, je n'ai pas pu répondre. Pouvez-vous répéter ?" {
		t.Errorf("spoken on failure: %q", said)
	}
	body["stream"] = false
	if r := b.VoicePost(t, "/voice/"+ten.Slug+"/chat", webtest.VoiceBearer(secret), body); r.Status != 502 || r.Body["error"] == nil {
		t.Errorf("without stream: %d %v", r.Status, r.Body)
	}
}
