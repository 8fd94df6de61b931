package visitors_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db/dbtest"
)

// One code per address (and per conversation) a throttle window, however
// many requests race for it: each of them used to read "nothing sent yet"
// and insert its own (issue 33, the outside probe's first finding).
func TestSaveVerificationCodeRace(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	ctx := context.Background()
	ten := dbtest.NewTenant(t, store)
	conv := func(i int) string {
		var id string
		if err := store.Pool().QueryRow(ctx, `INSERT INTO conversations (tenant_id, session_id, channel, visitor_type)
			VALUES ($1, $2, 'web', 'human') RETURNING id`, ten.ID, fmt.Sprintf("s-race-%d", i)).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	now := time.Now()
	code := func(email string) parley.VerificationCode {
		return parley.VerificationCode{Email: email, Hash: []byte("h"), Salt: []byte("s"), ExpiresAt: now.Add(10 * time.Minute)}
	}
	race := func(n int, conversation, email func(i int) string, at time.Time) (sent int) {
		t.Helper()
		convs := make([]string, n)
		for i := range convs {
			convs[i] = conversation(i)
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				wait, err := store.SaveVerificationCode(ctx, ten.ID, convs[i], code(email(i)), at, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if wait == 0 {
					sent++
				} else if wait < time.Second || wait > time.Minute {
					t.Errorf("wait %v", wait)
				}
			})
		}
		close(start)
		wg.Wait()
		return sent
	}
	// eight conversations asking for a code to one address (in any case)
	victim := func(i int) string { return []string{"victim@example.com", "Victim@Example.com"}[i%2] }
	if sent := race(8, func(i int) string { return conv(100 + i) }, victim, now); sent != 1 {
		t.Errorf("one address from 8 conversations: %d codes sent, want 1", sent)
	}
	// eight requests of one conversation, each for another address
	one := conv(1)
	other := func(i int) string { return fmt.Sprintf("other-%d@example.com", i) }
	if sent := race(8, func(int) string { return one }, other, now); sent != 1 {
		t.Errorf("one conversation, 8 requests: %d codes sent, want 1", sent)
	}
	// a minute later the address may have another
	if wait, err := store.SaveVerificationCode(ctx, ten.ID, conv(2), code("victim@example.com"), now.Add(time.Minute+time.Second), time.Minute); err != nil || wait != 0 {
		t.Errorf("a minute later: wait %v, %v", wait, err)
	}
	var n int
	if err := store.Pool().QueryRow(ctx, `SELECT count(*) FROM verification_codes WHERE tenant_id = $1 AND lower(email) = 'victim@example.com'`, ten.ID).Scan(&n); err != nil || n != 2 {
		t.Errorf("%d codes stored for the address, want 2 (%v)", n, err)
	}
}
