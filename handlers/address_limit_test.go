package handlers

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
)

func TestAddressLimit(t *testing.T) {
	t.Parallel()

	store := dbtest.New(t)
	ctx := context.Background()
	// 10:00:15 UTC: 45 seconds left in the minute, 3585 in the hour.
	now := time.Date(2026, 3, 4, 10, 0, 15, 0, time.UTC)

	wantLimited := func(t *testing.T, err error, retry int) {
		t.Helper()
		var e *parley.Error
		if !errors.As(err, &e) || e.Kind != parley.KindRateLimited {
			t.Fatalf("err = %#v, want rate limited", err)
		}
		want := fmt.Sprintf("Too many messages: at most 20 a minute and 200 an hour from one address; retry in %d seconds", retry)
		if e.Message != want {
			t.Errorf("message = %q, want %q", e.Message, want)
		}
		if got, ok := RetryAfterSeconds(err); !ok || got != retry {
			t.Errorf("retryAfterSeconds = %d, %v; want %d", got, ok, retry)
		}
	}
	send := func(t *testing.T, d *db.DB, ip string, at time.Time, n int) {
		t.Helper()
		for i := range n {
			if err := limitOf(ctx, d, ip, at); err != nil {
				t.Fatalf("message %d: %v", i+1, err)
			}
		}
	}

	t.Run("MinuteLimit", func(t *testing.T) {
		t.Parallel()
		ip := "198.51.100.1"
		send(t, store, ip, now, 20)
		wantLimited(t, limitOf(ctx, store, ip, now), 45)
		// Refused messages count against neither window.
		if n, err := store.Count(ctx, "chat:ip:min:"+ip, time.Minute, now); err != nil || n != 20 {
			t.Errorf("minute count = %d, %v; want 20", n, err)
		}
		if n, err := store.Count(ctx, "chat:ip:hour:"+ip, time.Hour, now); err != nil || n != 20 {
			t.Errorf("hour count = %d, %v; want 20", n, err)
		}
		// Other addresses are not affected; the next minute starts afresh.
		if err := limitOf(ctx, store, "198.51.100.2", now); err != nil {
			t.Errorf("other address: %v", err)
		}
		if err := limitOf(ctx, store, ip, now.Add(time.Minute)); err != nil {
			t.Errorf("next minute: %v", err)
		}
	})

	t.Run("HourLimit", func(t *testing.T) {
		t.Parallel()
		ip := "198.51.100.3"
		// 20 a minute for ten minutes stays under the minute limit.
		for m := range 10 {
			send(t, store, ip, now.Add(time.Duration(m)*time.Minute), 20)
		}
		at := now.Add(10 * time.Minute) // 10:10:15, 2985 seconds left in the hour
		wantLimited(t, limitOf(ctx, store, ip, at), 2985)
		if n, err := store.Count(ctx, "chat:ip:min:"+ip, time.Minute, at); err != nil || n != 0 {
			t.Errorf("minute count after a refusal = %d, %v; want 0", n, err)
		}
		if err := limitOf(ctx, store, ip, now.Add(time.Hour)); err != nil {
			t.Errorf("next hour: %v", err)
		}
	})

	t.Run("SharedAcrossInstances", func(t *testing.T) {
		t.Parallel()
		// A second pool on the same database stands for a second instance.
		other, err := db.Open(ctx, dbtest.URL(), 2)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(other.Close)
		ip := "198.51.100.4"
		send(t, store, ip, now, 10)
		send(t, other, ip, now, 10)
		wantLimited(t, limitOf(ctx, store, ip, now), 45)
		wantLimited(t, limitOf(ctx, other, ip, now), 45)
		if n, err := other.Count(ctx, "chat:ip:min:"+ip, time.Minute, now); err != nil || n != 20 {
			t.Errorf("count seen by the second instance = %d, %v; want 20", n, err)
		}
	})

	t.Run("IPv6CountsPer64", func(t *testing.T) {
		t.Parallel()
		send(t, store, "2001:db8:1:2::1", now, 10)
		send(t, store, "2001:db8:1:2:ffff::9", now, 10)
		wantLimited(t, limitOf(ctx, store, "2001:db8:1:2::abcd", now), 45)
		if err := limitOf(ctx, store, "2001:db8:1:3::1", now); err != nil {
			t.Errorf("another /64: %v", err)
		}
	})

	t.Run("IPv4MappedCountsAsIPv4", func(t *testing.T) {
		t.Parallel()
		send(t, store, "::ffff:198.51.100.5", now, 20)
		wantLimited(t, limitOf(ctx, store, "198.51.100.5", now), 45)
	})
}

// limitOf is the per-address limit's verdict for a request naming no
// tenant, counted as addressCount counts it.
func limitOf(ctx context.Context, store *db.DB, ip string, now time.Time) error {
	windows := ChatLimit.Windows(ip)
	counts, counted, _, err := store.HitWithinForTenant(ctx, windows, now, "")
	if err != nil {
		return err
	}
	return ChatLimit.Verdict(windows, now, counts, counted)
}

// An address refused lately is remembered until its refusal ends, and the
// memory stays bounded: past maxRefusals it sheds the refusals that ended,
// and keeps no more while none has.
func TestRecentRefusals(t *testing.T) {
	t.Parallel()
	r := refusals{until: map[string]time.Time{}}
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	r.note("chat:192.0.2.1", now, now.Add(30*time.Second))
	if !r.refused("chat:192.0.2.1", now.Add(29*time.Second)) || r.refused("chat:192.0.2.2", now) {
		t.Fatal("a refusal not remembered for its time, or another address taken for it")
	}
	if r.refused("chat:192.0.2.1", now.Add(30*time.Second)) || len(r.until) != 0 {
		t.Fatalf("a refusal remembered past its end (%d kept)", len(r.until))
	}
	for i := range maxRefusals {
		r.note(fmt.Sprintf("chat:a%d", i), now, now.Add(time.Duration(1+i%2)*time.Minute))
	}
	r.note("chat:full", now, now.Add(time.Minute))
	if r.refused("chat:full", now) || len(r.until) != maxRefusals {
		t.Fatalf("with %d refusals running, another was kept (%d kept)", maxRefusals, len(r.until))
	}
	// A minute on, half of them ended: they go, and the new one is kept.
	later := now.Add(time.Minute)
	r.note("chat:later", later, later.Add(time.Minute))
	if !r.refused("chat:later", later) || len(r.until) != maxRefusals/2+1 {
		t.Fatalf("after half the refusals ended: %d kept, want %d with the new one", len(r.until), maxRefusals/2+1)
	}
}
