package accounts_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/accounts"
	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/db/dbtest"
)

// TestLastOwnerRace: two owners demoting each other at once, or removing
// each other, leave one owner: the team's lock orders the two changes, and
// the second sees that it would take the last.
func TestLastOwnerRace(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	ctx := context.Background()
	e := audit.Entry{Actor: audit.Actor{Kind: audit.ActorSystem}, Action: audit.ActionMemberRoleChanged}
	for _, change := range []string{"demote", "remove"} {
		t.Run(change, func(t *testing.T) {
			ten := dbtest.NewTenant(t, store)
			var ids []string
			for _, email := range []string{"a@" + ten.Slug + ".test", "b@" + ten.Slug + ".test"} {
				if err := store.AddOwner(ctx, ten.ID, email, "hash", false); err != nil {
					t.Fatal(err)
				}
				u, err := store.UserByEmail(ctx, email)
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, u.ID)
			}
			e.TenantID = ten.ID
			errs := make([]error, 2)
			var wg sync.WaitGroup
			for i, id := range ids {
				wg.Go(func() {
					if change == "demote" {
						_, errs[i] = store.ChangeRole(ctx, ten.ID, id, "agent", auth.RoleHolds, ten.CreatedAt, e)
					} else {
						_, errs[i] = store.RemoveMember(ctx, ten.ID, id, ten.CreatedAt, e)
					}
				})
			}
			wg.Wait()
			refused := 0
			for _, err := range errs {
				switch {
				case errors.Is(err, accounts.ErrLastOwner):
					refused++
				case err != nil:
					t.Fatal(err)
				}
			}
			ms, err := store.Members(ctx, ten.ID)
			if err != nil {
				t.Fatal(err)
			}
			owners := 0
			for _, m := range ms {
				if m.Role == "owner" {
					owners++
				}
			}
			if refused != 1 || owners != 1 {
				t.Errorf("%d changes refused, %d owners left; want one and one", refused, owners)
			}
		})
	}
}
