package admin_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/web/webtest"
)

// BenchmarkInboxPoll is what one open dashboard costs while nothing
// happens: each poll of the navigation's count (every 5 s on every page),
// of the inbox's top section and of an open conversation (every 2 s), sent
// over HTTP by a signed-in owner with the version the page shows, answered
// 204 No Content. Beside them, the same polls when something changed (no
// version: the fragment read and rendered), and the database's part alone.
// The tenant has 10,000
// conversations of 8 messages, 40 of them waiting for a person and 10 held.
//
//	go test -run '^$' -bench BenchmarkInboxPoll -benchtime 2000x -benchmem ./handlers/admin/
func BenchmarkInboxPoll(b *testing.B) {
	ctx := context.Background()
	store, _, ts, p := webtest.NewBench(b, parley.NewTenantInput{Slug: "inbox-bench", Name: "Inbox bench", Plan: "scale",
		OwnerEmail: "owner@inbox-bench.test", OwnerPassword: "inbox bench password"})
	open := seedInboxLoad(b, store, p.ID)

	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) (int, string) {
		resp, err := hc.Get(ts.URL + path)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	_, login := get("/admin/login")
	csrf := regexp.MustCompile(`name="_csrf" value="([^"]+)"`).FindStringSubmatch(login)
	if csrf == nil {
		b.Fatal("no CSRF token on the sign-in page")
	}
	resp, err := hc.PostForm(ts.URL+"/admin/login", url.Values{"_csrf": {csrf[1]}, "email": {"owner@inbox-bench.test"}, "password": {"inbox bench password"}})
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		b.Fatalf("signing in: %v %v", err, resp)
	}
	resp.Body.Close()

	// each poll's address as its page renders it: the version it shows
	pollOf := func(page, id string) string {
		_, body := get(page)
		m := regexp.MustCompile(`id="` + id + `"[^>]*hx-get="([^"]+)"|hx-get="([^"]+)"[^>]*id="` + id + `"`).FindStringSubmatch(body)
		if m == nil {
			b.Fatalf("%s has no poll of #%s", page, id)
		}
		return strings.ReplaceAll(m[1]+m[2], "&amp;", "&")
	}
	_, nav := get("/admin/conversations/waiting")
	navPoll := strings.ReplaceAll(regexp.MustCompile(`hx-get="([^"]+)"`).FindStringSubmatch(nav)[1], "&amp;", "&")
	cases := []struct {
		name, path string
		want       int
	}{
		{"idle/nav", navPoll, http.StatusNoContent},
		{"idle/top", pollOf("/admin/conversations", "inbox-top"), http.StatusNoContent},
		{"idle/conversation", pollOf("/admin/conversations/"+open, "conversation-live"), http.StatusNoContent},
		{"changed/nav", "/admin/conversations/waiting", http.StatusOK},
		{"changed/top", "/admin/conversations/attention", http.StatusOK},
		{"changed/conversation", "/admin/conversations/" + open + "/live", http.StatusOK},
	}
	// the database's part alone: the version an idle poll reads, and the
	// top section's list a change reads
	b.Run("db/version", func(b *testing.B) {
		for b.Loop() {
			if _, err := store.InboxVersion(ctx, p.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("db/attention", func(b *testing.B) {
		for b.Loop() {
			if items, err := store.InboxAttention(ctx, p.ID); err != nil || len(items) != 50 {
				b.Fatal(err, len(items))
			}
		}
	})
	// what the open conversation's poll reads beside its row while a
	// person awaits or holds it: whether the visitor types
	b.Run("db/typing", func(b *testing.B) {
		for b.Loop() {
			if _, err := store.VisitorTyping(ctx, p.ID, open); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if status, body := get(c.path); status != c.want {
					b.Fatalf("%s: %d, want %d: %.300s", c.path, status, c.want, body)
				}
			}
		})
	}
}

// seedInboxLoad writes the benchmark's conversations and returns the id of
// one a person holds.
func seedInboxLoad(b *testing.B, store *db.DB, tenantID string) string {
	b.Helper()
	const conversations, messages = 10_000, 8
	start := time.Now().Add(-30 * 24 * time.Hour)
	convs := make([]db.SeedConversation, 0, conversations)
	for i := range conversations {
		c := db.SeedConversation{SessionID: fmt.Sprintf("bench-%d", i), Channel: "web", Status: parley.StatusBot, VisitorType: "human",
			FirstUserMessage: fmt.Sprintf("Question %d about my order", i), Locale: "en", CreatedAt: start.Add(time.Duration(i) * time.Minute)}
		_, _ = rand.Read(c.ID[:])
		c.ID[6], c.ID[8] = c.ID[6]&0x0f|0x40, c.ID[8]&0x3f|0x80
		switch {
		case i >= conversations-10:
			c.Status = parley.StatusHuman
		case i >= conversations-50:
			c.Status = parley.StatusEscalated
		}
		for m := range messages {
			role := parley.RoleUser
			if m%2 == 1 {
				role = parley.RoleAssistant
			}
			c.Messages = append(c.Messages, db.SeedMessage{Role: role, Content: fmt.Sprintf("Message %d of conversation %d, of some length to be read.", m, i),
				CreatedAt: c.CreatedAt.Add(time.Duration(m) * time.Second)})
		}
		convs = append(convs, c)
	}
	if _, err := store.CopySeedConversations(context.Background(), tenantID, convs); err != nil {
		b.Fatal(err)
	}
	// the held ones are a person's, as a take would leave them
	if _, err := store.Pool().Exec(context.Background(), `UPDATE conversations SET assignee = 'Sam', taken_at = now(),
		escalated_at = CASE WHEN status = 'ESCALATED' THEN now() END WHERE tenant_id = $1 AND status IN ('ESCALATED', 'HUMAN')`, tenantID); err != nil {
		b.Fatal(err)
	}
	last := convs[len(convs)-1].ID
	return fmt.Sprintf("%x-%x-%x-%x-%x", last[0:4], last[4:6], last[6:8], last[8:10], last[10:])
}
