package sealed_test

import (
	"context"
	"slices"
	"testing"

	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/sealed"
)

// Every bytea column of the schema is either a column of sealed values,
// which a rotation of the secret key walks, or one known to hold none: a
// new sealed column left off the list would keep its old key after a
// rotation, and fail once the previous key is gone.
func TestEveryByteaColumnIsListed(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	rows, err := store.Pool().Query(context.Background(), `SELECT table_name || '.' || column_name FROM information_schema.columns
		WHERE table_schema = 'public' AND data_type = 'bytea' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var inSchema []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		inSchema = append(inSchema, c)
	}
	listed := slices.Clone(sealed.NotSealed)
	for _, c := range sealed.Columns {
		listed = append(listed, c.String())
	}
	for _, c := range inSchema {
		if !slices.Contains(listed, c) {
			t.Errorf("bytea column %s is neither in sealed.Columns nor in sealed.NotSealed", c)
		}
	}
	for _, c := range listed {
		if !slices.Contains(inSchema, c) {
			t.Errorf("%s is listed but is no bytea column of the schema", c)
		}
	}
}
