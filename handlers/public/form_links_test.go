package public_test

import (
	"context"
	"strings"
	"testing"

	"github.com/parley/parley/web/webtest"
)

// TestFormLinks covers a lead form sent inside a chat (issue 38): the
// submission joins the session's conversation of its own tenant only, the
// visitor takes the name and email typed in without losing a verified
// identity, and every bad input is a 400 naming its field.
func TestFormLinks(t *testing.T) {
	t.Parallel()
	f := setupForm(t)
	b := f.b
	ten := b.NewTenant(t, "builder")
	other := b.NewTenant(t, "builder")
	b.PutDefaultForm(t, ten, contactForm)
	b.PutDefaultForm(t, other, contactForm)
	path := "/form/" + ten.Slug
	ctx := context.Background()

	// conversation starts a conversation of tenantID for session, its
	// visitor an anonymous one (or the given verified email's), and returns
	// the ids of both.
	conversation := func(t *testing.T, tenantID, session, email string) (conv, visitor string) {
		t.Helper()
		q := `INSERT INTO visitors (tenant_id, anonymous_key, auth_provider) VALUES ($1, sha256(gen_random_uuid()::text::bytea), 'anonymous') RETURNING id`
		args := []any{tenantID}
		if email != "" {
			q = `INSERT INTO visitors (tenant_id, email, display_name, auth_provider) VALUES ($1, $2, 'Verified Name', 'email') RETURNING id`
			args = append(args, email)
		}
		if err := b.DB.Pool().QueryRow(ctx, q, args...).Scan(&visitor); err != nil {
			t.Fatal(err)
		}
		if err := b.DB.Pool().QueryRow(ctx, `INSERT INTO conversations (tenant_id, session_id, visitor_id) VALUES ($1, $2, $3) RETURNING id`,
			tenantID, session, visitor).Scan(&conv); err != nil {
			t.Fatal(err)
		}
		return conv, visitor
	}
	// stored reads a submission's conversation and visitor ("" for none).
	stored := func(t *testing.T, id any) (conv, visitor string) {
		t.Helper()
		if err := b.DB.Pool().QueryRow(ctx, `SELECT coalesce(conversation_id::text, ''), coalesce(visitor_id::text, '')
			FROM submissions WHERE tenant_id = $1 AND id = $2`, ten.ID, id).Scan(&conv, &visitor); err != nil {
			t.Fatal(err)
		}
		return conv, visitor
	}
	visitor := func(t *testing.T, id string) (email, name, contact string) {
		t.Helper()
		if err := b.DB.Pool().QueryRow(ctx, `SELECT coalesce(email, ''), coalesce(display_name, ''), coalesce(contact_email, '')
			FROM visitors WHERE id = $1`, id).Scan(&email, &name, &contact); err != nil {
			t.Fatal(err)
		}
		return email, name, contact
	}

	t.Run("SessionOfTheTenant", func(t *testing.T) {
		session := "w-" + webtest.NewChatAddr()
		conv, vis := conversation(t, ten.ID, session, "")
		r := f.post(t, path, map[string]any{"fields": map[string]any{"full_name": "Ada Lovelace", "email": "ada@example.com"},
			"sessionId": session}, nil)
		if r.reqErr != nil || r.status != 201 {
			t.Fatalf("got %d %v (request: %v)", r.status, r.body, r.reqErr)
		}
		if c, v := stored(t, r.body["id"]); c != conv || v != vis {
			t.Errorf("stored with conversation %q visitor %q, want %q %q", c, v, conv, vis)
		}
		if email, name, contact := visitor(t, vis); email != "" || name != "Ada Lovelace" || contact != "ada@example.com" {
			t.Errorf("visitor email %q name %q contact %q, want the form's name and contact email, no identity", email, name, contact)
		}
		// The conversation's detail lists it, through the API.
		st, body := b.Do(t, "GET", "/tenants/"+ten.Slug+"/conversations/"+conv, ten.Token, nil)
		subs, _ := body["submissions"].([]any)
		if st != 200 || len(subs) != 1 || subs[0].(map[string]any)["id"] != r.body["id"] || subs[0].(map[string]any)["channel"] != "form" {
			t.Errorf("conversation detail: %d submissions %v", st, body["submissions"])
		}
		// A second form in the same chat names the visitor anew.
		r = f.post(t, path, map[string]any{"fields": map[string]any{"full_name": "Ada King", "email": "ada.king@example.com"},
			"sessionId": session}, nil)
		if _, name, contact := visitor(t, vis); r.status != 201 || name != "Ada King" || contact != "ada.king@example.com" {
			t.Errorf("second form: %d, visitor name %q contact %q", r.status, name, contact)
		}
	})

	t.Run("VerifiedIdentityKept", func(t *testing.T) {
		session := "w-" + webtest.NewChatAddr()
		_, vis := conversation(t, ten.ID, session, "known-"+strings.ReplaceAll(webtest.NewChatAddr(), ".", "")+"@example.com")
		before, _, _ := visitor(t, vis)
		r := f.post(t, path, map[string]any{"fields": map[string]any{"full_name": "Someone Else", "email": "else@example.com"},
			"sessionId": session}, nil)
		email, name, contact := visitor(t, vis)
		if r.status != 201 || email != before || name != "Verified Name" || contact != "else@example.com" {
			t.Errorf("%d: verified visitor now email %q name %q contact %q; want its email and name kept", r.status, email, name, contact)
		}
	})

	t.Run("AnotherTenantsSession", func(t *testing.T) {
		session := "w-" + webtest.NewChatAddr()
		_, vis := conversation(t, other.ID, session, "")
		r := f.post(t, path, map[string]any{"fields": map[string]any{"full_name": "Mallory", "email": "m@example.com"},
			"sessionId": session}, nil)
		if r.status != 201 {
			t.Fatalf("got %d %v", r.status, r.body)
		}
		if c, v := stored(t, r.body["id"]); c != "" || v != "" {
			t.Errorf("linked across tenants: conversation %q visitor %q", c, v)
		}
		if _, name, contact := visitor(t, vis); name != "" || contact != "" {
			t.Errorf("the other tenant's visitor was named %q %q", name, contact)
		}
	})

	t.Run("UnknownSessionWithAnonymousID", func(t *testing.T) {
		// A form sent before the first message: no conversation yet; the
		// browser's anonymous visitor takes the name, and is the one its
		// later chat finds.
		anon := newAnonymousID(t)
		r := f.post(t, path, map[string]any{"fields": map[string]any{"full_name": "Grace Hopper", "email": "grace@example.com"},
			"sessionId": "w-never-chatted", "anonymousId": anon}, nil)
		if r.reqErr != nil || r.status != 201 {
			t.Fatalf("got %d %v (request: %v)", r.status, r.body, r.reqErr)
		}
		c, v := stored(t, r.body["id"])
		if c != "" || v == "" {
			t.Fatalf("stored with conversation %q visitor %q", c, v)
		}
		if _, name, contact := visitor(t, v); name != "Grace Hopper" || contact != "grace@example.com" {
			t.Errorf("anonymous visitor named %q %q", name, contact)
		}
		same, err := b.DB.ResolveAnonymousVisitor(ctx, ten.ID, anon)
		if err != nil || same.ID != v {
			t.Errorf("the chat's visitor of this browser is %v (%v), want %s", same.ID, err, v)
		}
	})

	t.Run("BadInputs", func(t *testing.T) {
		for name, tc := range map[string]struct {
			body  map[string]any
			field string
		}{
			"SessionTooLong":     {map[string]any{"sessionId": strings.Repeat("s", 101)}, "sessionId"},
			"SessionNotString":   {map[string]any{"sessionId": 12}, "sessionId"},
			"AnonymousMalformed": {map[string]any{"anonymousId": "anon_XYZ"}, "anonymousId"},
			"BadEmail":           {map[string]any{"fields": map[string]any{"full_name": "Ada", "email": "ada@"}}, "email"},
			"MissingName":        {map[string]any{"fields": map[string]any{"email": "ada@example.com"}}, "full_name"},
		} {
			t.Run(name, func(t *testing.T) {
				body := map[string]any{"fields": goodForm["fields"]}
				for k, v := range tc.body {
					body[k] = v
				}
				r := f.post(t, path, body, nil)
				details, _ := r.body["details"].(map[string]any)
				if r.status != 400 || details[tc.field] == nil {
					t.Errorf("got %d %v, want 400 with details.%s", r.status, r.body, tc.field)
				}
			})
		}
	})
}

// TestFormDisplay covers formConfig.display: its default, its values on
// the segment's API and in the widget's settings, and a 400 for any other.
func TestFormDisplay(t *testing.T) {
	t.Parallel()
	f := setupForm(t)
	b := f.b
	ten := b.NewTenant(t, "builder")
	b.PutDefaultForm(t, ten, contactForm)
	var id string
	if err := b.DB.Pool().QueryRow(context.Background(), `SELECT id FROM segments WHERE tenant_id = $1 AND is_default`, ten.ID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	display := func(t *testing.T) (api, widget any) {
		t.Helper()
		st, seg := b.Do(t, "GET", "/tenants/"+ten.Slug+"/segments/"+id, ten.Token, nil)
		if st != 200 {
			t.Fatalf("segment: %d %v", st, seg)
		}
		if fc, ok := seg["formConfig"].(map[string]any); ok {
			api = fc["display"]
		}
		_, settings, _ := b.GetWidgetSettings(t, "/chat/"+ten.Slug+"/widget", nil)
		return api, settings["form"].(map[string]any)["display"]
	}
	if api, widget := display(t); api != "after_first_answer" || widget != "after_first_answer" {
		t.Errorf("default display: API %v widget %v, want after_first_answer", api, widget)
	}
	// A form stored before the setting existed reads the default.
	b.Exec(t, `UPDATE segments SET form_config = form_config - 'display' WHERE tenant_id = $1`, ten.ID)
	if api, _ := display(t); api != "after_first_answer" {
		t.Errorf("stored form without display reads %v", api)
	}
	for _, d := range []string{"on_open", "when_asked", "after_first_answer"} {
		form := map[string]any{}
		for k, v := range contactForm {
			form[k] = v
		}
		form["display"] = d
		b.PutDefaultForm(t, ten, form)
		if api, widget := display(t); api != d || widget != d {
			t.Errorf("display %s: API %v widget %v", d, api, widget)
		}
	}
	for _, bad := range []any{"always", 3, "ON_OPEN"} {
		form := map[string]any{"enabled": true, "fields": contactForm["fields"], "display": bad}
		st, body := b.Do(t, "PUT", "/tenants/"+ten.Slug+"/segments/"+id, ten.Token, map[string]any{"formConfig": form})
		details, _ := body["details"].(map[string]any)
		if st != 400 || details["formConfig"] == nil {
			t.Errorf("display %v: %d %v, want 400 with details.formConfig", bad, st, body)
		}
	}
}
