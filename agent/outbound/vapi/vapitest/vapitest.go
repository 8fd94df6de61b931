// Package vapitest is an in-process stand-in for Vapi's REST API, for the
// tests of the managed voice setup: it speaks the real wire protocol, so
// that package vapi's client runs as it does against Vapi.
package vapitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Server checks the operator's key (Bearer), records the assistants and
// numbers asked for, and answers in Vapi's shapes, errors included
// ({message, error, statusCode}, message a string or a list).
type Server struct {
	ts *httptest.Server

	mu         sync.Mutex
	key        string
	assistants []map[string]any // bodies of POST /assistant
	numbers    []map[string]any // bodies of POST /phone-number
	deleted    []string         // ids of DELETE /assistant/{id}
	failCreate int              // status of the next creates (0: succeed)
	failNumber bool             // the next number purchases fail
	failDelete bool             // deletes fail
}

// Key is the operator's key the server accepts at first.
const Key = "vapi-operator-key"

// Start starts a server, closed when the test ends.
func Start(t *testing.T) *Server {
	t.Helper()
	s := &Server{key: Key}
	s.ts = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.ts.Close)
	return s
}

// URL is the server's base URL (PARLEY_VAPI_BASE_URL).
func (s *Server) URL() string { return s.ts.URL }

// Close stops the server: Vapi unreachable.
func (s *Server) Close() { s.ts.Close() }

// SetKey changes the key the server accepts (the operator's key rotated).
func (s *Server) SetKey(key string) { s.mu.Lock(); s.key = key; s.mu.Unlock() }

// FailCreate makes the next assistant creations fail with status (0:
// succeed again).
func (s *Server) FailCreate(status int) { s.mu.Lock(); s.failCreate = status; s.mu.Unlock() }

// FailNumber makes number purchases fail, or succeed again.
func (s *Server) FailNumber(fail bool) { s.mu.Lock(); s.failNumber = fail; s.mu.Unlock() }

// FailDelete makes assistant deletions fail, or succeed again.
func (s *Server) FailDelete(fail bool) { s.mu.Lock(); s.failDelete = fail; s.mu.Unlock() }

// Assistants are the bodies of the assistants created, in order.
func (s *Server) Assistants() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.assistants)
}

// Numbers are the bodies of the numbers bought, in order.
func (s *Server) Numbers() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.numbers)
}

// Deleted are the ids of the assistants deleted, in order.
func (s *Server) Deleted() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.deleted)
}

func answer(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+s.key {
		answer(w, 401, map[string]any{"message": "Invalid Key. Hot tip, you may be using the private key instead of the public key, or vice versa.",
			"error": "Unauthorized", "statusCode": 401})
		return
	}
	var body map[string]any
	if r.Body != nil {
		_ = json.NewDecoder(r.Body).Decode(&body)
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/assistant":
		if s.failCreate != 0 {
			answer(w, s.failCreate, map[string]any{"message": []string{"model.url must be a URL address"}, "error": "Bad Request", "statusCode": s.failCreate})
			return
		}
		s.assistants = append(s.assistants, body)
		answer(w, 201, map[string]any{"id": "asst-" + string(rune('a'+len(s.assistants))), "orgId": "org-1", "name": body["name"]})
	case r.Method == http.MethodPost && r.URL.Path == "/phone-number":
		if s.failNumber {
			answer(w, 400, map[string]any{"message": []string{fmt.Sprintf("No numbers available for area code %v", body["numberDesiredAreaCode"])},
				"error": "Bad Request", "statusCode": 400})
			return
		}
		s.numbers = append(s.numbers, body)
		answer(w, 201, map[string]any{"id": "pn-1", "orgId": "org-1", "provider": "vapi", "number": "+14155550123",
			"assistantId": body["assistantId"], "status": "active"})
	case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/assistant/"):
		if s.failDelete {
			answer(w, 500, map[string]any{"message": "Internal server error", "statusCode": 500})
			return
		}
		s.deleted = append(s.deleted, strings.TrimPrefix(r.URL.Path, "/assistant/"))
		answer(w, 200, map[string]any{"id": strings.TrimPrefix(r.URL.Path, "/assistant/")})
	default:
		answer(w, 404, map[string]any{"message": "Cannot " + r.Method + " " + r.URL.Path, "error": "Not Found", "statusCode": 404})
	}
}
