package public_test

import (
	"strings"
	"testing"

	"github.com/parley/parley/web/webtest"
)

// A form posted again with its Idempotency-Key stores one submission and
// answers the first answer again, marked replayed; the key with another
// body is 422 and stores nothing; keys are the tenant's within the
// visitor's session, or within the address without one; a malformed key
// is 400 (255 characters are taken, 256 not). Every exchange is checked
// against the document.
func TestFormIdempotencyKey(t *testing.T) {
	t.Parallel()
	f := setupForm(t)
	b := f.b
	ten := b.NewTenant(t, "builder")
	other := b.NewTenant(t, "builder")
	b.PutDefaultForm(t, ten, contactForm)
	b.PutDefaultForm(t, other, contactForm)
	path := "/form/" + ten.Slug
	submissions := func() int {
		return b.Count(t, `SELECT count(*) FROM submissions WHERE tenant_id = $1`, ten.ID)
	}
	withSession := func(session, name string) map[string]any {
		return map[string]any{"sessionId": session, "fields": map[string]any{"full_name": name, "email": "ada@example.com"}}
	}
	key := map[string]string{"Idempotency-Key": "form-key-1"}

	first := f.post(t, path, withSession("s-1", "Ada Lovelace"), key)
	if first.status != 201 || first.header.Get("Idempotency-Replayed") != "" {
		t.Fatalf("first post: %d %v %v", first.status, first.header, first.body)
	}
	again := f.post(t, path, withSession("s-1", "Ada Lovelace"), key)
	if again.status != 201 || again.body["id"] != first.body["id"] || again.header.Get("Idempotency-Replayed") != "true" {
		t.Errorf("sent again: %d %v %v, want the first answer replayed", again.status, again.header, again.body)
	}
	if n := submissions(); n != 1 {
		t.Errorf("%d submissions after a post sent twice with one key, want 1", n)
	}
	reused := f.post(t, path, withSession("s-1", "Grace Hopper"), key)
	if reused.status != 422 || reused.body["code"] != "IDEMPOTENCY_KEY_REUSED" {
		t.Errorf("the key with another body: %d %v", reused.status, reused.body)
	}
	if n := submissions(); n != 1 {
		t.Errorf("%d submissions after the refused body, want 1", n)
	}
	// Another visitor's session, or another tenant, has keys of its own.
	if r := f.post(t, path, withSession("s-2", "Ada Lovelace"), key); r.status != 201 || r.body["id"] == first.body["id"] || r.header.Get("Idempotency-Replayed") != "" {
		t.Errorf("another session with the key: %d %v %v", r.status, r.header, r.body)
	}
	if r := f.post(t, "/form/"+other.Slug, withSession("s-1", "Ada Lovelace"), key); r.status != 201 || r.header.Get("Idempotency-Replayed") != "" {
		t.Errorf("another tenant with the key: %d %v %v", r.status, r.header, r.body)
	}

	// Without a session, the address is the scope.
	from := func(addr, k string) map[string]string {
		return map[string]string{"Idempotency-Key": k, "X-Forwarded-For": addr}
	}
	addr := webtest.NewChatAddr()
	a1 := f.post(t, path, goodForm, from(addr, "form-key-2"))
	a2 := f.post(t, path, goodForm, from(addr, "form-key-2"))
	if a1.status != 201 || a2.status != 201 || a2.body["id"] != a1.body["id"] || a2.header.Get("Idempotency-Replayed") != "true" {
		t.Errorf("from one address twice: %d %v, %d %v", a1.status, a1.body, a2.status, a2.body)
	}
	if r := f.post(t, path, goodForm, from(webtest.NewChatAddr(), "form-key-2")); r.status != 201 || r.body["id"] == a1.body["id"] {
		t.Errorf("from another address: %d %v", r.status, r.body)
	}
	if n := submissions(); n != 4 {
		t.Errorf("%d submissions, want 4 (two sessions, two addresses)", n)
	}

	// Keys of 255 characters are taken, 256 and empty not.
	if r := f.post(t, path, goodForm, map[string]string{"Idempotency-Key": strings.Repeat("k", 255)}); r.status != 201 {
		t.Errorf("a key of 255: %d %v", r.status, r.body)
	}
	for _, bad := range []string{strings.Repeat("k", 256), "é-not-ascii"} {
		if r := f.post(t, path, goodForm, map[string]string{"Idempotency-Key": bad}); r.status != 400 || r.body["code"] != "INVALID_IDEMPOTENCY_KEY" {
			t.Errorf("key %.20q: %d %v", bad, r.status, r.body)
		}
	}
	if n := submissions(); n != 5 {
		t.Errorf("%d submissions, want 5 (the malformed keys store nothing)", n)
	}
}
