package jobs

import (
	"github.com/riverqueue/river"

	"github.com/parley/parley/db/deliveryargs"
	"github.com/parley/parley/db/knowledge"
)

// DeliveryObserver is told how each webhook delivery attempt ended, for
// the operator's metrics (web/metrics implements it); nil observes nothing.
// It runs in the delivery's job: it must be quick and never block.
type DeliveryObserver interface {
	// DeliveryAttempt is called once per attempt that sent a request, with
	// one of the Delivery* outcomes.
	DeliveryAttempt(outcome string)
}

// How a delivery attempt ended.
const (
	DeliveryDelivered = "delivered" // the endpoint answered 2xx
	DeliveryRetrying  = "retrying"  // it failed; another attempt is scheduled
	DeliveryFailed    = "failed"    // it failed, and it was the last attempt
)

// DeliveryOutcomes are every outcome, for an observer that prepares its
// series.
var DeliveryOutcomes = []string{DeliveryDelivered, DeliveryRetrying, DeliveryFailed}

// observe tells the observer, if any, how an attempt ended.
func (w *WebhookDeliveryWorker) observe(outcome string) {
	if w.Observer != nil {
		w.Observer.DeliveryAttempt(outcome)
	}
}

// Queues are the River queues the jobs run in.
var Queues = []string{river.QueueDefault, deliveryargs.Queue, MailQueue, knowledge.EmbedQueue}
