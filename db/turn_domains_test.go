package db_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/parley/parley/db/dbtest"
)

// The rules on conversations' and messages' columns are domains
// (migration 00032): every value the API can write goes in, any other is
// refused as a check violation, on insert and on update, and the tables
// carry no CHECK constraint of their own, which PostgreSQL would prepare
// again for every statement a turn runs.
func TestTurnColumnsRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	ten := dbtest.NewTenant(t, store)

	rows, _ := store.Pool().Query(ctx, `SELECT conrelid::regclass || '.' || conname FROM pg_constraint
		WHERE contype = 'c' AND conrelid IN ('conversations'::regclass, 'messages'::regclass)`)
	if checks, err := pgx.CollectRows(rows, pgx.RowTo[string]); err != nil || len(checks) > 0 {
		t.Errorf("table check constraints on the turn's tables: %v %v; make them domains", checks, err)
	}

	var conv string
	if err := store.Pool().QueryRow(ctx, `INSERT INTO conversations (tenant_id, session_id, channel, visitor_type, verified_by)
		VALUES ($1, 's-rules', 'voice', 'agent', 'code') RETURNING id`, ten.ID).Scan(&conv); err != nil {
		t.Fatal(err)
	}
	var channel, status string
	if err := store.Pool().QueryRow(ctx, `SELECT channel, status FROM conversations WHERE id = $1`, conv).Scan(&channel, &status); err != nil ||
		channel != "voice" || status != "BOT" {
		t.Fatalf("read back: %q %q %v, want voice BOT (the default)", channel, status, err)
	}
	for _, c := range []struct{ set, value string }{
		{"session_id", ""}, {"session_id", strings.Repeat("s", 101)},
		{"channel", "fax"}, {"channel", "WEB"}, {"status", "OPEN"}, {"status", "human"}, {"assignee", ""}, {"assignee", strings.Repeat("a", 101)}, {"visitor_type", "robot"}, {"verified_by", "guess"},
	} {
		_, err := store.Pool().Exec(ctx, fmt.Sprintf(`UPDATE conversations SET %s = $2 WHERE id = $1`, c.set), conv, c.value)
		if !isCheckViolation(err) {
			t.Errorf("%s = %q: %v, want a check violation", c.set, c.value, err)
		}
	}
	for _, c := range []struct{ set, value string }{
		{"session_id", strings.Repeat("s", 100)}, {"channel", "api"}, {"status", "ESCALATED"}, {"status", "HUMAN"}, {"status", "CLOSED"}, {"assignee", strings.Repeat("a", 100)},
		{"visitor_type", "human"}, {"verified_by", "challenge"},
	} {
		if _, err := store.Pool().Exec(ctx, fmt.Sprintf(`UPDATE conversations SET %s = $2 WHERE id = $1`, c.set), conv, c.value); err != nil {
			t.Errorf("%s = %q: %v", c.set, c.value, err)
		}
	}
	if _, err := store.Pool().Exec(ctx, `UPDATE conversations SET verified_by = NULL WHERE id = $1`, conv); err != nil {
		t.Errorf("verified_by = NULL: %v", err)
	}

	insert := `INSERT INTO messages (tenant_id, conversation_id, role, content, feedback) VALUES ($1, $2, $3, 'hi', $4)`
	for _, m := range []struct {
		role     string
		feedback any
		ok       bool
	}{
		{"user", nil, true}, {"assistant", 1, true}, {"assistant", -1, true},
		{"system", nil, false}, {"tool", nil, false}, {"assistant", 0, false}, {"assistant", 2, false},
	} {
		_, err := store.Pool().Exec(ctx, insert, ten.ID, conv, m.role, m.feedback)
		if m.ok && err != nil || !m.ok && !isCheckViolation(err) {
			t.Errorf("message %q feedback %v: %v, want ok %v", m.role, m.feedback, err, m.ok)
		}
	}
}

func isCheckViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23514"
}
