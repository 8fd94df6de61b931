package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/web"
	"github.com/parley/parley/web/webtest"
)

// A backup of a database with a tenant and a conversation, restored into a
// fresh database, serves that tenant again: a real server on the restored
// database continues the conversation (the model sees the turns before the
// backup), opens the tenant's sealed key and takes its API token. With
// another key, the backup is refused before anything is written, and so
// are a backup, a restore into a database that is not empty, and serve.
func TestBackupRestore(t *testing.T) {
	src, srcURL := dbtest.Fresh(t, false)
	dst, dstURL := dbtest.Fresh(t, true)
	llm := llmtest.NewOpenAI(t, llmtest.Turn{Text: []string{"Before the backup."}})
	serveOn := func(store *db.DB, url string) *webtest.Bundle {
		cfg := webtest.Config(t, webtest.ChatEnv(llm.URL), map[string]string{"DATABASE_URL": url})
		srv, err := web.NewServer(cfg, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		return webtest.NewBundle(t, srv, store)
	}
	b := serveOn(src, srcURL)
	ten := b.NewTenant(t, "starter")
	first := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Hello before", "sessionId": "restored", "stream": false}, nil)
	if first.Status != 200 {
		t.Fatalf("chat before the backup: %d %v", first.Status, first.Body)
	}
	visitorKey := b.VisitorKey(t, ten.ID)

	file := filepath.Join(t.TempDir(), "parley.backup")
	t.Setenv("DATABASE_URL", srcURL)
	t.Setenv("PARLEY_SECRET_KEY", cliKey)
	_, _, err := runCLI(t, "backup", "--out", file)
	wantErr(t, err, "backup refused", "PARLEY_SECRET_KEY does not open")
	t.Setenv("PARLEY_SECRET_KEY", webtest.SecretKey)
	out, errOut, err := runCLI(t, "backup", "--out", file)
	if err != nil || !strings.Contains(out, "1 tenants") {
		t.Fatalf("backup: %v %q %q", err, out, errOut)
	}

	t.Setenv("DATABASE_URL", dstURL)
	t.Setenv("PARLEY_SECRET_KEY", cliKey)
	_, _, err = runCLI(t, "restore", "--in", file)
	wantErr(t, err, "restore refused", "PARLEY_SECRET_KEY does not open the secrets of "+file)
	var tables int
	if err := dst.Pool().QueryRow(context.Background(), `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&tables); err != nil || tables != 0 {
		t.Fatalf("after a refused restore the database has %d tables (%v), want none", tables, err)
	}
	t.Setenv("PARLEY_SECRET_KEY", webtest.SecretKey)
	if out, errOut, err := runCLI(t, "restore", "--in", file); err != nil || !strings.Contains(out, "1 tenants") {
		t.Fatalf("restore: %v %q %q", err, out, errOut)
	}
	_, _, err = runCLI(t, "restore", "--in", file)
	wantErr(t, err, "restore refused", "is not empty")

	// parley serve on the restored database refuses another key at start.
	t.Setenv("PARLEY_SECRET_KEY", cliKey)
	t.Setenv("PARLEY_ADDR", "127.0.0.1:0")
	_, _, err = runCLI(t, "serve")
	if !errors.Is(err, auth.ErrKeyMismatch) {
		t.Errorf("serve with another key: %v, want %v", err, auth.ErrKeyMismatch)
	}

	restored := serveOn(dst, dstURL)
	llm.Push(llmtest.Turn{Text: []string{"After the restore."}})
	r := restored.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Hello after", "sessionId": "restored", "stream": false}, nil)
	if r.Status != 200 || r.Body["message"] != "After the restore." || r.Body["conversationId"] != first.Body["conversationId"] || r.Body["messageCount"] != float64(4) {
		t.Fatalf("chat after the restore: %d %v", r.Status, r.Body)
	}
	reqs := llm.Requests()
	var seen []string
	for _, m := range reqs[len(reqs)-1].Chat.Messages {
		seen = append(seen, string(m.Content))
	}
	if !strings.Contains(strings.Join(seen, "|"), "Hello before|Before the backup.|Hello after") {
		t.Errorf("the model saw %q, want the turns before the backup then the new message", seen)
	}
	if got := restored.VisitorKey(t, ten.ID); !bytes.Equal(got, visitorKey) {
		t.Error("the restored tenant's signing key differs")
	}
	if st, body := restored.Do(t, "GET", "/tenants/"+ten.Slug, ten.Token, nil); st != 200 || body["tenant"].(map[string]any)["id"] != ten.ID {
		t.Errorf("the tenant's token on the restored database: %d %v", st, body)
	}
}
