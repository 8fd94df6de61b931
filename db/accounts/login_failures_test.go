package accounts_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/parley/parley/db/accounts"
	"github.com/parley/parley/db/dbtest"
)

func TestLoginThrottleWait(t *testing.T) {
	t.Parallel()
	l := accounts.LoginThrottle{Free: 3, Base: time.Second, Max: time.Minute}
	for failures, want := range []time.Duration{0, 0, 0, 0, time.Second, 2 * time.Second, 4 * time.Second,
		8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute} {
		if got := l.Wait(failures); got != want {
			t.Errorf("Wait(%d) = %v, want %v", failures, got, want)
		}
	}
	if got := l.Wait(1000); got != time.Minute {
		t.Errorf("Wait(1000) = %v, want the maximum", got)
	}
}

func TestLoginAttempts(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	ctx := context.Background()
	base := time.Date(2012, 5, 6, 7, 8, 0, 0, time.UTC)
	throttle := func(t *testing.T, free int, clear bool) accounts.LoginThrottle {
		return accounts.LoginThrottle{Key: dbtest.UniqueKey(t), Free: free, Base: time.Second, Max: time.Minute, Memory: time.Hour, ClearOnSuccess: clear}
	}
	start := func(t *testing.T, keys []accounts.LoginThrottle, at time.Time) accounts.LoginAttempt {
		t.Helper()
		a, err := store.StartLoginAttempt(ctx, keys, at)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	failures := func(t *testing.T, key string, at time.Time) int {
		t.Helper()
		n, err := store.LoginFailures(ctx, key, at)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	t.Run("failures past the free ones make the next attempt wait, twice as long each time", func(t *testing.T) {
		t.Parallel()
		keys := []accounts.LoginThrottle{throttle(t, 2, false)}
		at := base
		for i := range 2 {
			if a := start(t, keys, at); a.Wait != 0 || a.Failures[0] != i {
				t.Fatalf("attempt %d: wait %v, failures %d", i+1, a.Wait, a.Failures[0])
			}
		}
		// Two failures: free. The third attempt fails too: the next waits 1 s.
		if a := start(t, keys, at); a.Wait != 0 {
			t.Fatalf("third attempt refused for %v", a.Wait)
		}
		if a := start(t, keys, at.Add(999*time.Millisecond)); a.Wait != time.Millisecond {
			t.Fatalf("attempt during the wait: wait %v, want 1ms", a.Wait)
		}
		// A refused attempt counts nothing.
		if n := failures(t, keys[0].Key, at); n != 3 {
			t.Fatalf("failures after a refused attempt = %d, want 3", n)
		}
		at = at.Add(time.Second)
		if a := start(t, keys, at); a.Wait != 0 {
			t.Fatalf("attempt after the wait refused for %v", a.Wait)
		}
		if a := start(t, keys, at.Add(time.Second)); a.Wait != time.Second {
			t.Errorf("after four failures: wait %v, want 1s of 2s left", a.Wait)
		}
		// An hour without failure forgets them.
		if a := start(t, keys, at.Add(time.Hour)); a.Wait != 0 || a.Failures[0] != 0 {
			t.Errorf("an hour later: wait %v, failures %d", a.Wait, a.Failures[0])
		}
	})

	t.Run("the longest wait of the keys refuses, and counts against none", func(t *testing.T) {
		t.Parallel()
		busy, fresh := throttle(t, 0, false), throttle(t, 0, false)
		start(t, []accounts.LoginThrottle{busy}, base)
		if a := start(t, []accounts.LoginThrottle{fresh, busy}, base); a.Wait != time.Second {
			t.Fatalf("wait %v, want 1s", a.Wait)
		}
		if n := failures(t, fresh.Key, base); n != 0 {
			t.Errorf("a refused attempt counted %d against the other key", n)
		}
	})

	t.Run("a success takes its count back and clears the keys that ask for it", func(t *testing.T) {
		t.Parallel()
		addr, pair := throttle(t, 1, false), throttle(t, 1, true)
		keys := []accounts.LoginThrottle{addr, pair}
		start(t, keys, base)
		at := base.Add(time.Minute)
		a := start(t, keys, at)
		if err := store.ForgiveLoginAttempt(ctx, a); err != nil {
			t.Fatal(err)
		}
		if n := failures(t, addr.Key, at); n != 1 {
			t.Errorf("address failures after a success = %d, want the 1 before it", n)
		}
		if n := failures(t, pair.Key, at); n != 0 {
			t.Errorf("pair failures after a success = %d, want 0", n)
		}
		// The address's last failure is the one before the success again:
		// its wait of 1 s ended long ago.
		if a := start(t, keys, at); a.Wait != 0 {
			t.Errorf("attempt after a success refused for %v", a.Wait)
		}
	})

	t.Run("attempts sent together count each other", func(t *testing.T) {
		t.Parallel()
		k := throttle(t, 1, false)
		start(t, []accounts.LoginThrottle{k}, base)
		var wg sync.WaitGroup
		var mu sync.Mutex
		let := 0
		for range 10 {
			wg.Go(func() {
				if a := start(t, []accounts.LoginThrottle{k}, base.Add(time.Second)); a.Wait == 0 {
					mu.Lock()
					let++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		// One failure, free; the next makes the key wait 1 s, and then 2 s.
		if let != 1 {
			t.Errorf("%d of 10 simultaneous attempts let through, want 1", let)
		}
	})

	t.Run("forgotten failures are deleted", func(t *testing.T) {
		t.Parallel()
		k := throttle(t, 1, false)
		at := base.AddDate(-1, 0, 0)
		start(t, []accounts.LoginThrottle{k}, at)
		if _, err := store.DeleteExpiredLoginFailures(ctx, at.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if n := failures(t, k.Key, at); n != 0 {
			t.Errorf("failures after the clean-up = %d", n)
		}
	})
}
