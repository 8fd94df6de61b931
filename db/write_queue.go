package db

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// writeQueue gathers the writes of concurrent turns into batches, as a
// database commits the WAL of concurrent transactions with one flush: the
// first write to come runs at once, alone; those that come while a write is
// under way queue, and when it ends the first of them runs all those queued
// (up to maxWriteBatch) as one batch. A write alone waits for nobody; under
// load a write waits at most for the one before its own. W is a write's
// state, which the batch's function fills in (its result or error).
type writeQueue[W queuedWrite] struct {
	mu      sync.Mutex
	queue   []*queued[W]
	leading bool // a write is under way: a new one queues
}

// queuedWrite is a write a writeQueue runs: fail gives it err when its
// batch failed before setting its result or error.
type queuedWrite interface{ fail(err error) }

// queued is a write waiting in a writeQueue.
type queued[W queuedWrite] struct {
	w     W
	ready chan bool // true: the write was run; false: run the next batch
}

// maxWriteBatch bounds the writes of one batch.
const maxWriteBatch = 64

// writeBatchTimeout bounds a batch's run, as the engine bounds a turn's
// writes (its storeTimeout). A batch runs for several turns, so not under
// the context of the one that runs it, whose cancellation or deadline
// would fail the others' writes.
const writeBatchTimeout = 10 * time.Second

// run runs w with the writes queued beside it (write runs a batch, setting
// each one's result or error) and returns when w was run.
func (q *writeQueue[W]) run(ctx context.Context, w W, write func(context.Context, []W)) {
	e := &queued[W]{w: w, ready: make(chan bool, 1)}
	q.mu.Lock()
	q.queue = append(q.queue, e)
	if q.leading {
		q.mu.Unlock()
		if <-e.ready {
			return
		}
		q.mu.Lock() // e heads the queue: it runs the next batch
	} else {
		q.leading = true
	}
	n := min(len(q.queue), maxWriteBatch)
	batch, ws := make([]*queued[W], n), make([]W, n)
	copy(batch, q.queue)
	q.queue = append(q.queue[:0], q.queue[n:]...)
	q.mu.Unlock()
	for i, b := range batch {
		ws[i] = b.w
	}

	runBatch(ctx, ws, write)

	q.handOn()
	for _, b := range batch {
		if b != e {
			b.ready <- true
		}
	}
}

// lead takes the lead when no write is under way, for a write that does
// not go through run (the caller calls handOn when it is done): the writes
// that come meanwhile queue. It returns false when a write is under way.
func (q *writeQueue[W]) lead() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.leading {
		return false
	}
	q.leading = true
	return true
}

// handOn ends the lead: the first write queued runs the next batch.
func (q *writeQueue[W]) handOn() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) > 0 {
		q.queue[0].ready <- false
	} else {
		q.leading = false
	}
}

// runBatch runs write over batch, bounded by writeBatchTimeout. Should
// write panic, each write of the batch without its result gets the panic
// as its error, so that the turns waiting on it, and the queue behind
// them, go on.
func runBatch[W queuedWrite](ctx context.Context, batch []W, write func(context.Context, []W)) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeBatchTimeout)
	defer cancel()
	defer func() {
		if v := recover(); v != nil {
			for _, w := range batch {
				w.fail(fmt.Errorf("writing the batch: %v", v))
			}
		}
	}()
	write(wctx, batch)
}
