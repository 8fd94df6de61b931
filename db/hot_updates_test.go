package db_test

import (
	"context"
	"strings"
	"testing"

	"github.com/parley/parley/db/dbtest"
)

// TestTurnUpdatesIndexNoColumn: the columns a turn's updates of its
// conversation's row change are in none of the table's indexes (keys,
// included columns, expressions, predicates), so that PostgreSQL can write
// those updates in place on the row's page (heap-only tuples) rather than a
// new entry in every index (migration 00061). An index that needs one of
// them costs every turn: it fails here, to be weighed.
func TestTurnUpdatesIndexNoColumn(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	ctx := context.Background()
	turn := []string{"message_count", "last_message_at", "updated_at", "first_user_message", "answered", "repeated_question"}
	rows, err := store.Pool().Query(ctx, `SELECT i.indexrelid::regclass::text,
			coalesce((SELECT string_agg(a.attname, ' ') FROM pg_attribute a
				WHERE a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)), ''),
			coalesce(pg_get_expr(i.indexprs, i.indrelid), '') || ' ' || coalesce(pg_get_expr(i.indpred, i.indrelid), '')
		FROM pg_index i WHERE i.indrelid = 'conversations'::regclass`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var name, columns, exprs string
		if err := rows.Scan(&name, &columns, &exprs); err != nil {
			t.Fatal(err)
		}
		n++
		words := strings.Fields(columns + " " + strings.NewReplacer("(", " ", ")", " ", ",", " ").Replace(exprs))
		for _, w := range words {
			for _, c := range turn {
				if w == c {
					t.Errorf("index %s uses %s, which every turn updates", name, c)
				}
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 5 {
		t.Fatalf("read %d indexes of conversations, want its eight or so", n)
	}
	var options []string
	if err := store.Pool().QueryRow(ctx, `SELECT coalesce(reloptions, '{}') FROM pg_class WHERE oid = 'conversations'::regclass`).
		Scan(&options); err != nil {
		t.Fatal(err)
	}
	if strings.Join(options, ",") != "fillfactor=80" {
		t.Errorf("conversations' options %v, want fillfactor=80: room on each page for the turns' updates", options)
	}
}
