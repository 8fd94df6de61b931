package public_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/parley/parley/web/webtest"
)

// formHarness posts to /form/{slug} and checks every exchange against the
// OpenAPI document.
type formHarness struct {
	b      *webtest.Bundle
	doc    *openapi3.T
	router routers.Router
}

// formResponse is an answer of POST /form/{slug}; reqErr says whether the
// document accepts the request.
type formResponse struct {
	status int
	header http.Header
	body   map[string]any
	reqErr error
}

func setupForm(t *testing.T) *formHarness {
	t.Helper()
	verify := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"success": %t}`, r.PostForm.Get("response") == "good-token")
	}))
	t.Cleanup(verify.Close)
	b, _ := webtest.SetupChat(t, map[string]string{"PARLEY_CAPTCHA_VERIFY_URL": verify.URL})
	doc := webtest.LoadOpenAPI(t)
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &formHarness{b: b, doc: doc, router: router}
}

// post sends body (a string is sent as is) from a fresh address unless
// headers set X-Forwarded-For, and validates the response against the document.
func (f *formHarness) post(t *testing.T, path string, body any, headers map[string]string) formResponse {
	t.Helper()
	raw, _ := json.Marshal(body)
	if s, ok := body.(string); ok {
		raw = []byte(s)
	}
	newReq := func() *http.Request {
		req, _ := http.NewRequest("POST", f.b.TS.URL+path, bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", webtest.NewChatAddr())
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		return req
	}
	req := newReq()
	route, params, err := f.router.FindRoute(req)
	if err != nil {
		t.Fatalf("POST %s: not in the document: %v", path, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	out := formResponse{reqErr: openapi3filter.ValidateRequest(context.Background(), in)}

	req = newReq()
	resp, err := f.b.TS.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	respBody, _ := io.ReadAll(resp.Body)
	out.status, out.header = resp.StatusCode, resp.Header
	if err := json.Unmarshal(respBody, &out.body); err != nil {
		t.Fatalf("POST %s: bad JSON answer %d %q", path, resp.StatusCode, respBody)
	}
	in.Request = newReq()
	check := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
	check.SetBodyBytes(respBody)
	if err := openapi3filter.ValidateResponse(context.Background(), check); err != nil {
		t.Errorf("POST %s: %d response %s does not match the document: %v", path, resp.StatusCode, respBody, err)
	}
	return out
}

// formField is one field of a segment form.
func formField(name, typ string, required bool) map[string]any {
	return map[string]any{"name": name, "label": strings.ToUpper(name[:1]) + name[1:], "type": typ, "required": required}
}

// contactForm is the form the tests put on a tenant's default segment.
var contactForm = map[string]any{
	"enabled": true, "intent": "Call back", "confirmationMessage": "Thanks! We will call you back within a day.",
	"fields": []any{formField("full_name", "text", true), formField("email", "email", true),
		formField("phone", "phone", false), formField("message", "textarea", false)},
}

var goodForm = map[string]any{"fields": map[string]any{"full_name": "Ada Lovelace", "email": "ada@example.com"}}

func TestFormSubmit(t *testing.T) {
	t.Parallel()
	f := setupForm(t)
	b := f.b
	ten := b.NewTenant(t, "builder") // room for the segments below
	b.PutDefaultForm(t, ten, contactForm)
	path := "/form/" + ten.Slug

	t.Run("Success", func(t *testing.T) {
		r := f.post(t, path, map[string]any{
			"fields":  map[string]any{"full_name": "  Ada Lovelace ", "email": "ada@example.com", "phone": nil, "message": ""},
			"pageUrl": "https://acme.example/contact",
		}, nil)
		if r.reqErr != nil {
			t.Errorf("request does not validate: %v", r.reqErr)
		}
		if r.status != 201 || r.body["status"] != "NEW" || r.body["message"] != "Thanks! We will call you back within a day." || r.body["id"] == "" {
			t.Fatalf("got %d %v", r.status, r.body)
		}
		webtest.SameKeys(t, "form reply", f.doc.Components.Schemas["FormSubmission"].Value, r.body)
		var (
			channel, toolType, toolName, status string
			input, result                       map[string]any
			pageURL, convID, visitorID          *string
		)
		if err := b.DB.Pool().QueryRow(context.Background(), `SELECT channel, tool_type, tool_name, status, input, result,
			page_url, conversation_id::text, visitor_id::text FROM submissions WHERE tenant_id = $1 AND id = $2`, ten.ID, r.body["id"]).
			Scan(&channel, &toolType, &toolName, &status, &input, &result, &pageURL, &convID, &visitorID); err != nil {
			t.Fatal(err)
		}
		if channel != "form" || toolType != "SUBMIT_FORM" || toolName != "Call back" || status != "NEW" || convID != nil || visitorID != nil {
			t.Errorf("stored %s %s %q %s conversation %v visitor %v", channel, toolType, toolName, status, convID, visitorID)
		}
		if len(input) != 2 || input["full_name"] != "Ada Lovelace" || input["email"] != "ada@example.com" {
			t.Errorf("input = %v, want the trimmed filled-in fields only", input)
		}
		if result["success"] != true || result["message"] != "Thanks! We will call you back within a day." {
			t.Errorf("result = %v", result)
		}
		if pageURL == nil || *pageURL != "https://acme.example/contact" {
			t.Errorf("pageUrl = %v", pageURL)
		}
		if n := b.Count(t, `SELECT count(*) FROM conversations WHERE tenant_id = $1`, ten.ID); n != 0 {
			t.Errorf("%d conversations, want none", n)
		}
		var typ string
		var payload map[string]any
		if err := b.DB.Pool().QueryRow(context.Background(), `SELECT type, payload FROM events WHERE tenant_id = $1 AND submission_id = $2`,
			ten.ID, r.body["id"]).Scan(&typ, &payload); err != nil {
			t.Fatal(err)
		}
		data, _ := payload["data"].(map[string]any)
		if typ != "submission.created" || payload["event"] != "submission.created" || data["channel"] != "form" || data["id"] != r.body["id"] {
			t.Errorf("event %s %v", typ, payload)
		}
		if _, ok := data["messages"]; ok {
			t.Errorf("payload has messages: %v", data)
		}
		if data["conversationId"] != nil || data["toolType"] != "SUBMIT_FORM" || data["toolName"] != "Call back" {
			t.Errorf("payload data %v", data)
		}
	})

	t.Run("DefaultConfirmationAndToolName", func(t *testing.T) {
		slug := b.NewFormSegment(t, ten, "Plain", map[string]any{"enabled": true, "fields": []any{formField("email", "email", true)}})
		r := f.post(t, path+"?segment="+slug, map[string]any{"fields": map[string]any{"email": "bob@example.com"}}, nil)
		if r.status != 201 || r.body["message"] != "Thank you, we will be in touch." {
			t.Fatalf("got %d %v", r.status, r.body)
		}
		if n := b.Count(t, `SELECT count(*) FROM submissions WHERE id = $1 AND tool_name = 'form' AND input = '{"email":"bob@example.com"}'`, r.body["id"]); n != 1 {
			t.Errorf("submission not stored with tool name form")
		}
	})

	t.Run("NothingFilledIn", func(t *testing.T) {
		slug := b.NewFormSegment(t, ten, "Optional", map[string]any{"enabled": true, "fields": []any{formField("phone", "phone", false)}})
		r := f.post(t, path+"?segment="+slug, map[string]any{"fields": map[string]any{"phone": " "}}, nil)
		if details, _ := r.body["details"].(map[string]any); r.status != 400 || details["fields"] != "fill in at least one field" {
			t.Errorf("got %d %v", r.status, r.body)
		}
	})

	long := strings.Repeat("é", 2000)
	cases := []struct {
		name     string
		body     any
		status   int
		err      string
		details  map[string]string
		docValid bool // the document accepts the request
	}{
		{"NotJSON", "nope", 400, "Request body must be a JSON object", nil, false},
		{"FieldsMissing", map[string]any{"pageUrl": "https://acme.example"}, 400, "Validation failed",
			map[string]string{"fields": "is required: an object of the form's field names to values"}, false},
		{"FieldsNotObject", map[string]any{"fields": []any{"a"}}, 400, "Validation failed",
			map[string]string{"fields": "must be an object"}, false},
		{"MissingRequired", map[string]any{"fields": map[string]any{"email": "ada@example.com"}}, 400, "Validation failed",
			map[string]string{"full_name": "is required"}, true},
		{"BlankAndNullRequired", map[string]any{"fields": map[string]any{"full_name": "   ", "email": nil}}, 400, "Validation failed",
			map[string]string{"full_name": "is required", "email": "is required"}, true},
		{"BadEmail", map[string]any{"fields": map[string]any{"full_name": "Ada", "email": "ada at example"}}, 400, "Validation failed",
			map[string]string{"email": "must be an email address"}, true},
		{"BadPhone", map[string]any{"fields": map[string]any{"full_name": "Ada", "email": "ada@example.com", "phone": "call me"}}, 400, "Validation failed",
			map[string]string{"phone": "must be a phone number: digits, optionally a leading +, spaces, dots, dashes, parentheses"}, true},
		{"UnknownField", map[string]any{"fields": map[string]any{"full_name": "Ada", "email": "ada@example.com", "company": "Acme"}}, 400, "Validation failed",
			map[string]string{"company": "is not a field of this form"}, true},
		{"WrongType", map[string]any{"fields": map[string]any{"full_name": 42, "email": true, "message": map[string]any{"a": 1}}}, 400, "Validation failed",
			map[string]string{"full_name": "must be a string", "email": "must be a string", "message": "must be a string"}, false},
		{"ValueOver2000", map[string]any{"fields": map[string]any{"full_name": "Ada", "email": "ada@example.com", "message": long + "é"}}, 400, "Validation failed",
			map[string]string{"message": "must be at most 2000 characters"}, false},
		{"UnknownSegment", map[string]any{"segment": "nope", "fields": goodForm["fields"]}, 400, `Unknown or inactive segment: "nope"`,
			map[string]string{"segment": "no active segment of this tenant has this slug"}, true},
		{"PageURLTooLong", map[string]any{"fields": goodForm["fields"], "pageUrl": strings.Repeat("u", 2001)}, 400, "Validation failed",
			map[string]string{"pageUrl": "must be at most 2000 characters"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := f.post(t, path, tc.body, nil)
			if r.status != tc.status || r.body["error"] != tc.err {
				t.Fatalf("got %d %v, want %d %q", r.status, r.body, tc.status, tc.err)
			}
			got, _ := r.body["details"].(map[string]any)
			if len(got) != len(tc.details) {
				t.Errorf("details %v, want %v", got, tc.details)
			}
			for k, v := range tc.details {
				if got[k] != v {
					t.Errorf("details[%s] = %v, want %q", k, got[k], v)
				}
			}
			if (r.reqErr == nil) != tc.docValid {
				t.Errorf("document accepts the request: %t, want %t (%v)", r.reqErr == nil, tc.docValid, r.reqErr)
			}
		})
	}

	t.Run("ValueOf2000", func(t *testing.T) {
		r := f.post(t, path, map[string]any{"fields": map[string]any{"full_name": "Ada", "email": "ada@example.com", "message": long}}, nil)
		if r.status != 201 || r.reqErr != nil {
			t.Fatalf("got %d %v (request %v)", r.status, r.body, r.reqErr)
		}
		if n := b.Count(t, `SELECT count(*) FROM submissions WHERE id = $1 AND length(input->>'message') = 2000`, r.body["id"]); n != 1 {
			t.Errorf("message not stored whole")
		}
	})

	t.Run("BodyTooLarge", func(t *testing.T) {
		r := f.post(t, path, map[string]any{"fields": goodForm["fields"], "pageUrl": strings.Repeat("u", 64<<10)}, nil)
		if r.status != 413 || r.body["error"] != "Request body too large" {
			t.Errorf("got %d %v", r.status, r.body)
		}
	})

	t.Run("SegmentForms", func(t *testing.T) {
		off := b.NewFormSegment(t, ten, "Off", map[string]any{"enabled": false, "fields": []any{formField("email", "email", true)}})
		r := f.post(t, path, map[string]any{"segment": off, "fields": map[string]any{"email": "a@b.co"}}, nil)
		if r.status != 404 || r.body["error"] != "Form not enabled for this segment" {
			t.Errorf("disabled form: got %d %v", r.status, r.body)
		}
		other := b.NewTenant(t, "starter")
		none := b.NewFormSegment(t, other, "None", nil)
		r = f.post(t, "/form/"+other.Slug+"?segment="+none, goodForm, nil)
		if r.status != 404 || r.body["error"] != "Form not enabled for this segment" {
			t.Errorf("no form: got %d %v", r.status, r.body)
		}
		// The default segment of a new tenant has no form either.
		r = f.post(t, "/form/"+other.Slug, goodForm, nil)
		if r.status != 404 {
			t.Errorf("default segment without a form: got %d %v", r.status, r.body)
		}
	})

	t.Run("OtherTenantsSegment", func(t *testing.T) {
		other := b.NewTenant(t, "starter")
		theirs := b.NewFormSegment(t, other, "Theirs", contactForm)
		r := f.post(t, path, map[string]any{"segment": theirs, "fields": goodForm["fields"]}, nil)
		if r.status != 400 || r.body["error"] != fmt.Sprintf("Unknown or inactive segment: %q", theirs) {
			t.Errorf("got %d %v", r.status, r.body)
		}
		if n := b.Count(t, `SELECT count(*) FROM submissions WHERE tenant_id = $1`, other.ID); n != 0 {
			t.Errorf("%d submissions stored for the other tenant", n)
		}
	})

	t.Run("InactiveSegment", func(t *testing.T) {
		paused := b.NewFormSegment(t, ten, "Paused", contactForm)
		if st, body := b.Do(t, "PUT", "/tenants/"+ten.Slug+"/segments/"+paused, ten.Token, map[string]any{"isActive": false}); st != 200 {
			t.Fatalf("deactivating: %d %v", st, body)
		}
		r := f.post(t, path+"?segment="+paused, goodForm, nil)
		if r.status != 400 {
			t.Errorf("got %d %v", r.status, r.body)
		}
	})

	t.Run("Visitor", func(t *testing.T) {
		vt := b.NewTenant(t, "starter")
		b.PutDefaultForm(t, vt, contactForm)
		st, v := b.Do(t, "POST", "/tenants/"+vt.Slug+"/visitors", vt.Token, map[string]any{"externalId": "user-42"})
		if st != 201 {
			t.Fatalf("visitor: %d %v", st, v)
		}
		visitorOf := func(id any) *string {
			var vid *string
			if err := b.DB.Pool().QueryRow(context.Background(), `SELECT visitor_id::text FROM submissions WHERE id = $1`, id).Scan(&vid); err != nil {
				t.Fatal(err)
			}
			return vid
		}
		byExternal := f.post(t, "/form/"+vt.Slug, map[string]any{"fields": goodForm["fields"], "visitorId": "user-42"}, nil)
		byID := f.post(t, "/form/"+vt.Slug, goodForm, map[string]string{"X-Visitor-Id": v["id"].(string)})
		for name, r := range map[string]formResponse{"externalId": byExternal, "id": byID} {
			if r.status != 201 {
				t.Fatalf("%s: got %d %v", name, r.status, r.body)
			}
			if got := visitorOf(r.body["id"]); got == nil || *got != v["id"] {
				t.Errorf("%s: visitor %v, want %v", name, got, v["id"])
			}
		}
		// An unknown reference, or another tenant's visitor, links nothing and creates nobody.
		for _, ref := range []string{"ghost", "user-4", v["id"].(string)} {
			path := "/form/" + vt.Slug
			if ref == v["id"] {
				path = "/form/" + ten.Slug
			}
			r := f.post(t, path, map[string]any{"fields": goodForm["fields"], "visitorId": ref}, nil)
			if r.status != 201 || visitorOf(r.body["id"]) != nil {
				t.Errorf("%s: got %d %v, want a submission without visitor", ref, r.status, r.body)
			}
		}
		if n := b.Count(t, `SELECT count(*) FROM visitors WHERE tenant_id IN ($1, $2)`, vt.ID, ten.ID); n != 1 {
			t.Errorf("%d visitors, want only the one created through the API", n)
		}
	})
}

func TestFormGates(t *testing.T) {
	t.Parallel()
	f := setupForm(t)
	b := f.b
	// The per-address limits count in fixed minutes of the server's clock:
	// one set in the middle of a minute keeps RateLimitOfItsOwn's posts in
	// one window (on the wall clock, a run across a minute's end reset the
	// count before the 11th post).
	webtest.MidWindowClock(&b.Srv.Base.Now, time.Minute)
	ten := b.NewTenant(t, "starter")
	b.PutDefaultForm(t, ten, contactForm)
	path := "/form/" + ten.Slug

	t.Run("UnknownTenant", func(t *testing.T) {
		r := f.post(t, "/form/no-such-tenant", goodForm, nil)
		if r.status != 404 || r.body["error"] != "Tenant not found" {
			t.Errorf("got %d %v", r.status, r.body)
		}
		// The body is checked before the gates, as on the chat.
		r = f.post(t, "/form/no-such-tenant", map[string]any{}, nil)
		if r.status != 400 {
			t.Errorf("bad body: got %d %v", r.status, r.body)
		}
	})

	t.Run("PlanWithoutWidget", func(t *testing.T) {
		free := b.NewTenant(t, "free")
		b.PutDefaultForm(t, free, contactForm)
		r := f.post(t, "/form/"+free.Slug, goodForm, nil)
		if r.status != 402 || r.body["code"] != "NOT_ACTIVATED" {
			t.Errorf("got %d %v", r.status, r.body)
		}
	})

	t.Run("Origin", func(t *testing.T) {
		o := b.NewTenant(t, "starter")
		b.PutDefaultForm(t, o, contactForm)
		b.Exec(t, `UPDATE tenants SET allowed_domains = '{example.com}', widget_key = 'wk-1' WHERE id = $1`, o.ID)
		// Origin is checked before the widget key.
		r := f.post(t, "/form/"+o.Slug, goodForm, map[string]string{"Origin": "https://evil.test"})
		if r.status != 403 || r.body["error"] != "Origin not allowed" {
			t.Errorf("got %d %v", r.status, r.body)
		}
		r = f.post(t, "/form/"+o.Slug, goodForm, map[string]string{"Origin": "https://www.example.com", "X-Widget-Key": "wk-1"})
		if r.status != 201 {
			t.Errorf("allowed origin: got %d %v", r.status, r.body)
		}
	})

	t.Run("WidgetKey", func(t *testing.T) {
		w := b.NewTenant(t, "starter")
		b.PutDefaultForm(t, w, contactForm)
		b.Exec(t, `UPDATE tenants SET widget_key = 'wk-123' WHERE id = $1`, w.ID)
		for _, h := range []map[string]string{nil, {"X-Widget-Key": "wrong"}} {
			r := f.post(t, "/form/"+w.Slug, goodForm, h)
			if r.status != 403 || r.body["error"] != "Invalid or missing widget key" {
				t.Errorf("key %v: got %d %v", h, r.status, r.body)
			}
		}
		r := f.post(t, "/form/"+w.Slug, map[string]any{"fields": goodForm["fields"], "widgetKey": "wk-123"}, nil)
		if r.status != 201 {
			t.Errorf("body key: got %d %v", r.status, r.body)
		}
		r = f.post(t, "/form/"+w.Slug, goodForm, map[string]string{"X-Widget-Key": "wk-123"})
		if r.status != 201 {
			t.Errorf("header key: got %d %v", r.status, r.body)
		}
	})

	t.Run("Captcha", func(t *testing.T) {
		cp := b.NewTenant(t, "starter")
		b.PutDefaultForm(t, cp, contactForm)
		b.Exec(t, `UPDATE tenants SET captcha_enabled = true, captcha_site_key = 'site', captcha_secret_key = $2 WHERE id = $1`,
			cp.ID, b.Box.Seal([]byte("secret")))
		// The bot challenge comes before the segment.
		r := f.post(t, "/form/"+cp.Slug+"?segment=nope", goodForm, nil)
		if r.status != 403 || r.body["code"] != "CAPTCHA_REQUIRED" {
			t.Errorf("no token: got %d %v", r.status, r.body)
		}
		r = f.post(t, "/form/"+cp.Slug, map[string]any{"fields": goodForm["fields"], "captchaToken": "bad-token"}, nil)
		if r.status != 403 || r.body["code"] != "CAPTCHA_FAILED" {
			t.Errorf("bad token: got %d %v", r.status, r.body)
		}
		r = f.post(t, "/form/"+cp.Slug, map[string]any{"fields": goodForm["fields"], "captchaToken": "good-token"}, nil)
		if r.status != 201 {
			t.Errorf("good token: got %d %v", r.status, r.body)
		}
	})

	t.Run("RateLimitOfItsOwn", func(t *testing.T) {
		// Form posts count apart from chat messages: 10 a minute from one
		// address, and ten chat messages before them use none of that.
		addr := map[string]string{"X-Forwarded-For": webtest.NewChatAddr()}
		chat := map[string]any{"message": "Hello", "sessionId": "s-1"}
		for i := range 10 {
			if r := b.Chat(t, "/chat/"+ten.Slug+"?segment=nope", chat, addr); r.Status != 400 {
				t.Fatalf("chat message %d: got %d %v", i+1, r.Status, r.Body)
			}
			if r := f.post(t, path+"?segment=nope", goodForm, addr); r.status != 400 {
				t.Fatalf("form post %d: got %d %v", i+1, r.status, r.body)
			}
		}
		r := f.post(t, path, goodForm, addr)
		if r.status != 429 || r.header.Get("Retry-After") == "" || !strings.Contains(r.body["error"].(string), "Too many form posts") {
			t.Errorf("11th form post: got %d %v (Retry-After %q)", r.status, r.body, r.header.Get("Retry-After"))
		}
		if c := b.Chat(t, "/chat/"+ten.Slug, chat, addr); c.Status != 200 {
			t.Errorf("chat after the form posts: got %d %v, want 200 (its own counter)", c.Status, c.Body)
		}
	})
}
