package origins_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/origins"
)

// A tenant keeps its Kept most recently refused origins, whatever the
// number refused; refusals of one origin add up, its first sighting kept;
// another tenant's rows are neither trimmed nor reachable.
func TestRefusedOriginsKept(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	ctx := t.Context()
	ten, other := dbtest.NewTenant(t, store), dbtest.NewTenant(t, store)
	start := time.Date(2030, 1, 2, 3, 0, 0, 0, time.UTC)
	if err := store.NoteRefusedOrigin(ctx, other.ID, "https://other.example", 1, start); err != nil {
		t.Fatal(err)
	}
	for i := range origins.Kept + 5 {
		if err := store.NoteRefusedOrigin(ctx, ten.ID, fmt.Sprintf("https://site%d.example", i), 1, start.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	// The latest refused again: its count adds up, its first sighting stays.
	last := fmt.Sprintf("https://site%d.example", origins.Kept+4)
	if err := store.NoteRefusedOrigin(ctx, ten.ID, last, 3, start.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	list, err := store.RefusedOrigins(ctx, ten.ID, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != origins.Kept || list[0].Origin != last || list[0].Refusals != 4 ||
		!list[0].FirstSeen.Equal(start.Add(time.Duration(origins.Kept+4)*time.Minute)) || !list[0].LastSeen.Equal(start.Add(time.Hour)) {
		t.Fatalf("%d origins kept, the first %+v; want %d, %s refused 4 times", len(list), list[0], origins.Kept, last)
	}
	if got := list[len(list)-1].Origin; got != "https://site5.example" {
		t.Errorf("the oldest kept is %s, want site5 (the 5 oldest trimmed)", got)
	}
	mine, err := store.RefusedOrigins(ctx, other.ID, time.Time{})
	if err != nil || len(mine) != 1 {
		t.Fatalf("the other tenant's: %v, %v", mine, err)
	}
	if _, err := store.RefusedOrigin(ctx, ten.ID, mine[0].ID); parley.ErrorKind(err) != parley.KindNotFound {
		t.Errorf("another tenant's origin read: %v", err)
	}
	if err := store.ForgetRefusedOrigin(ctx, ten.ID, mine[0].ID); parley.ErrorKind(err) != parley.KindNotFound {
		t.Errorf("another tenant's origin forgotten: %v", err)
	}
}
