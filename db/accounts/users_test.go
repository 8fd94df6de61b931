package accounts_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/db/dbtest"
)

func TestUserByEmailOddInput(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	for _, email := range []string{"", "nobody@example.com", "a\x00b@example.com", "\xff@example.com"} {
		t.Run(fmt.Sprintf("%q", email), func(t *testing.T) {
			t.Parallel()
			if _, err := store.UserByEmail(context.Background(), email); parley.ErrorKind(err) != parley.KindNotFound {
				t.Errorf("err = %v, want not found", err)
			}
		})
	}
}
