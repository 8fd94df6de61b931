package db

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/parley/parley"
)

// waitQueued waits until n replies are queued in b.
func waitQueued(t *testing.T, b *writeQueue[*pendingReply], n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		b.mu.Lock()
		got := len(b.queue)
		b.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d replies queued, want %d", got, n)
		}
	}
}

// A reply that comes alone is written at once, alone; those that come while
// a write is under way wait and are written together, by the first of them,
// each getting its own message back.
func TestReplyBatchGathers(t *testing.T) {
	t.Parallel()
	var b writeQueue[*pendingReply]
	var (
		mu      sync.Mutex
		batches [][]string
	)
	first := make(chan struct{})   // the first write has begun
	release := make(chan struct{}) // the first write may end
	write := func(_ context.Context, batch []*pendingReply) {
		mu.Lock()
		n := len(batches)
		ids := make([]string, len(batch))
		for i, p := range batch {
			ids[i] = p.r.ConversationID
		}
		batches = append(batches, ids)
		mu.Unlock()
		if n == 0 {
			close(first)
			<-release
		}
		for _, p := range batch {
			p.m = parley.Message{ID: "m-" + p.r.ConversationID, ConversationID: p.r.ConversationID}
		}
	}
	save := func(id string) (parley.Message, error) {
		return saveReplyWith(context.Background(), &b, parley.TurnRecord{ConversationID: id}, write)
	}
	got := make(chan string, 10)
	go func() {
		m, _ := save("c0")
		got <- "c0:" + m.ID
	}()
	<-first
	for i := 1; i <= 5; i++ {
		go func() {
			m, _ := save(fmt.Sprintf("c%d", i))
			got <- fmt.Sprintf("c%d:%s", i, m.ID)
		}()
	}
	// The five wait in the queue while the first write is under way.
	waitQueued(t, &b, 5)
	close(release)
	seen := map[string]bool{}
	for range 6 {
		seen[<-got] = true
	}
	for i := range 6 {
		if want := fmt.Sprintf("c%d:m-c%d", i, i); !seen[want] {
			t.Errorf("reply c%d did not get its own message back: %v", i, seen)
		}
	}
	if len(batches) != 2 || len(batches[0]) != 1 || batches[0][0] != "c0" || len(batches[1]) != 5 {
		t.Fatalf("batches %v, want [c0] then the five queued together", batches)
	}
	if b.leading || len(b.queue) != 0 {
		t.Fatalf("after the writes: leading %v, %d queued", b.leading, len(b.queue))
	}
	// Alone again: written at once.
	if m, err := save("c9"); err != nil || m.ID != "m-c9" || len(batches) != 3 || len(batches[2]) != 1 {
		t.Fatalf("a reply alone: %+v %v, batches %v", m, err, batches)
	}
}

// A batch is at most maxWriteBatch replies: the rest are written by the
// first of them, after.
func TestReplyBatchBounded(t *testing.T) {
	t.Parallel()
	var b writeQueue[*pendingReply]
	var sizes []int
	var mu sync.Mutex
	first, release := make(chan struct{}), make(chan struct{})
	write := func(_ context.Context, batch []*pendingReply) {
		mu.Lock()
		sizes = append(sizes, len(batch))
		n := len(sizes)
		mu.Unlock()
		if n == 1 {
			close(first)
			<-release
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = saveReplyWith(context.Background(), &b, parley.TurnRecord{}, write) })
	<-first
	extra := maxWriteBatch + 3
	for range extra {
		wg.Go(func() { _, _ = saveReplyWith(context.Background(), &b, parley.TurnRecord{}, write) })
	}
	waitQueued(t, &b, extra)
	close(release)
	wg.Wait()
	if len(sizes) != 3 || sizes[0] != 1 || sizes[1] != maxWriteBatch || sizes[2] != 3 {
		t.Fatalf("batch sizes %v, want [1 %d 3]", sizes, maxWriteBatch)
	}
}

// A write that panics fails its batch's replies, not the turns after it:
// each gets an error, and the next reply is written.
func TestReplyBatchSurvivesPanic(t *testing.T) {
	t.Parallel()
	var b writeQueue[*pendingReply]
	boom := func(context.Context, []*pendingReply) { panic("boom") }
	if _, err := saveReplyWith(context.Background(), &b, parley.TurnRecord{ConversationID: "c1"}, boom); err == nil {
		t.Fatal("a write that panicked gave no error")
	}
	ok := func(_ context.Context, batch []*pendingReply) {
		for _, p := range batch {
			p.m = parley.Message{ID: "m"}
		}
	}
	if m, err := saveReplyWith(context.Background(), &b, parley.TurnRecord{ConversationID: "c2"}, ok); err != nil || m.ID != "m" {
		t.Fatalf("after a panic: %+v %v", m, err)
	}
	if b.leading {
		t.Fatal("the queue is left leading after a panic")
	}
}

// A batch is written again reply by reply only when it surely wrote
// nothing: refused before it was sent, or by PostgreSQL. A batch whose fate
// is unknown (the connection failed, the time ran out) is not, as that
// could store a reply twice.
func TestReplyBatchRetriesOnlyWhatWroteNothing(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("%w: two replies of conversation c", errNotSent), true},
		{fmt.Errorf("reading: %w", &pgconn.PgError{Code: "40P01"}), true}, // deadlock detected
		{&pgconn.PgError{Code: "22P02"}, true},                            // invalid text for a uuid
		{context.DeadlineExceeded, false},
		{fmt.Errorf("reading: %w", io.ErrUnexpectedEOF), false},
		{errors.New("unexpected EOF"), false},
	} {
		if got := writtenNothing(c.err); got != c.want {
			t.Errorf("writtenNothing(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
