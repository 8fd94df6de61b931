package auth_test

import (
	"testing"
	"time"

	"github.com/alexedwards/scs/v2/memstore"

	"github.com/parley/parley/auth"
)

func TestHashedSessionStore(t *testing.T) {
	inner := memstore.NewWithCleanupInterval(0)
	s := auth.HashedSessionStore{Store: inner}
	const token = "cookie-value"
	if err := s.Commit(token, []byte("data"), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := inner.Find(token); found {
		t.Error("the store keeps the token itself")
	}
	if b, found, _ := inner.Find(auth.SessionKey(token)); !found || string(b) != "data" {
		t.Errorf("under the token's hash: %q, %v", b, found)
	}
	if b, found, err := s.Find(token); err != nil || !found || string(b) != "data" {
		t.Errorf("Find(token) = %q, %v, %v", b, found, err)
	}
	// What the store keeps is no token: its hash is looked up instead.
	if _, found, _ := s.Find(auth.SessionKey(token)); found {
		t.Error("the stored key works as a token")
	}
	if err := s.Delete(token); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := inner.Find(auth.SessionKey(token)); found {
		t.Error("Delete left the session")
	}
}
