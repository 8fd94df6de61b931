// Package deliveryargs is the River job of one webhook delivery attempt: its
// args, queue and insert options. db inserts it in the transaction that records
// an event and jobs works it; as a leaf of db it keeps River's job types out of
// db's store and needs no import of jobs from db.
package deliveryargs

import "github.com/riverqueue/river"

// Args is the job that makes one attempt of a delivery (River retries it on the
// delivery schedule).
type Args struct {
	DeliveryID string `json:"deliveryId"`
}

// Kind names the job.
func (Args) Kind() string { return "webhook_delivery" }

// Queue is the River queue deliveries run on, apart from other work so that a
// slow receiver cannot hold up corpus syncs, nor the reverse.
const Queue = "webhooks"

// MaxAttempts is how many attempts a delivery gets: the first and five retries.
const MaxAttempts = 6

// InsertOpts puts deliveries on their queue with their number of attempts.
func (Args) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, MaxAttempts: MaxAttempts}
}
