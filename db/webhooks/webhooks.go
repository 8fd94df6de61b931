package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/parley/parley"
	"github.com/parley/parley/db/deliveryargs"
	"github.com/parley/parley/db/internal/pgbase"
)

// Webhook limits.
const (
	MaxWebhookEndpoints = 20 // per tenant
	MaxWebhookPIIFields = 32
)

// Delivery statuses. A delivery is pending until an attempt succeeds, the
// last attempt fails, or its endpoint is disabled first (dropped).
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"
	DeliveryDropped   = "dropped"
)

// DeliveryMaxAttempts is how many attempts a delivery gets: the first and five
// retries.
const DeliveryMaxAttempts = deliveryargs.MaxAttempts

// WebhookEndpoint is a tenant's receiver of events. SecretSealed is the
// signing secret sealed with the service's key; it never leaves the service.
type WebhookEndpoint struct {
	ID           string    `db:"id"`
	TenantID     string    `db:"tenant_id"`
	URL          string    `db:"url"`
	Description  string    `db:"description"`
	Events       []string  `db:"events"`
	Enabled      bool      `db:"enabled"`
	PIIFields    []string  `db:"pii_fields"`
	SecretSealed []byte    `db:"secret_sealed"`
	CreatedAt    time.Time `db:"created_at"`
	UpdatedAt    time.Time `db:"updated_at"`
}

// WebhookEndpointWrite holds the fields of a create or a partial update; the
// handler has validated them.
type WebhookEndpointWrite struct {
	URL          parley.Opt[string]
	Description  parley.Opt[string]
	Events       parley.Opt[[]string]
	Enabled      parley.Opt[bool]
	PIIFields    parley.Opt[[]string]
	SecretSealed []byte // create only
}

// WebhookDelivery is one event sent (or to be sent) to one endpoint.
type WebhookDelivery struct {
	ID            string     `db:"id"`
	TenantID      string     `db:"tenant_id"`
	EndpointID    string     `db:"endpoint_id"`
	EventID       string     `db:"event_id"`
	Event         string     `db:"event"`
	Status        string     `db:"status"`
	Attempts      int        `db:"attempts"`
	HTTPStatus    *int       `db:"http_status"`
	LastError     *string    `db:"last_error"`
	CreatedAt     time.Time  `db:"created_at"`
	LastAttemptAt *time.Time `db:"last_attempt_at"`
	NextAttemptAt *time.Time `db:"next_attempt_at"`
	DeliveredAt   *time.Time `db:"delivered_at"`
	UpdatedAt     time.Time  `db:"updated_at"`
}

// DeliveryStats sums an endpoint's deliveries created since Since.
type DeliveryStats struct {
	Since         time.Time  `json:"since"`
	Total         int        `json:"total"`
	Pending       int        `json:"pending"`
	Succeeded     int        `json:"succeeded"`
	Failed        int        `json:"failed"`
	Dropped       int        `json:"dropped"`
	LastAttemptAt *time.Time `json:"lastAttemptAt"`
	LastSuccessAt *time.Time `json:"lastSuccessAt"`
}

const endpointColumns = `id, tenant_id, url, description, events, enabled, pii_fields, secret_sealed, created_at, updated_at`

const deliveryColumns = `id, tenant_id, endpoint_id, event_id, event, status, attempts, http_status, last_error,
	created_at, last_attempt_at, next_attempt_at, delivered_at, updated_at`

// EnqueueDeliveries makes, in tx, one delivery of ev for each enabled endpoint
// of the tenant subscribed to its type, and the River job of each (inserted
// with client). An event is thus never recorded without its deliveries, nor
// the reverse: the store that records an event calls it in the event's
// transaction.
func EnqueueDeliveries(ctx context.Context, tx pgx.Tx, client *river.Client[pgx.Tx], ev Event) error {
	rows, _ := tx.Query(ctx, `INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event_id, event)
		SELECT tenant_id, id, $2, $3 FROM webhook_endpoints
		WHERE tenant_id = $1 AND enabled AND $3 = ANY(events) RETURNING id`, ev.TenantID, ev.ID, ev.Type)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("enqueueing deliveries: %w", err)
	}
	return insertDeliveryJobs(ctx, tx, client, ids)
}

// insertDeliveryJobs inserts, in tx, the River job of each delivery with
// client and records its id on the delivery.
func insertDeliveryJobs(ctx context.Context, tx pgx.Tx, client *river.Client[pgx.Tx], ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	params := make([]river.InsertManyParams, len(ids))
	for i, id := range ids {
		params[i] = river.InsertManyParams{Args: deliveryargs.Args{DeliveryID: id}}
	}
	res, err := client.InsertManyTx(ctx, tx, params)
	if err != nil {
		return fmt.Errorf("inserting delivery jobs: %w", err)
	}
	// River does not promise the order of the results: pair them by args.
	deliveries, jobs := make([]string, len(res)), make([]int64, len(res))
	for i, r := range res {
		var args deliveryargs.Args
		if err := json.Unmarshal(r.Job.EncodedArgs, &args); err != nil {
			return fmt.Errorf("reading delivery job args: %w", err)
		}
		deliveries[i], jobs[i] = args.DeliveryID, r.Job.ID
	}
	if _, err := tx.Exec(ctx, `UPDATE webhook_deliveries d SET job_id = j.job_id
		FROM unnest($1::uuid[], $2::bigint[]) AS j(id, job_id) WHERE d.id = j.id`, deliveries, jobs); err != nil {
		return fmt.Errorf("recording delivery jobs: %w", err)
	}
	return nil
}

// ListWebhookEndpoints lists a tenant's endpoints, oldest first.
func (d *Webhooks) ListWebhookEndpoints(ctx context.Context, tenantID string) ([]WebhookEndpoint, error) {
	rows, _ := d.pool.Query(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE tenant_id = $1
		ORDER BY created_at, id`, tenantID)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[WebhookEndpoint])
	if err != nil {
		return nil, fmt.Errorf("listing webhook endpoints: %w", err)
	}
	return out, nil
}

// WebhookEndpoint returns one of the tenant's endpoints.
func (d *Webhooks) WebhookEndpoint(ctx context.Context, tenantID, id string) (WebhookEndpoint, error) {
	return webhookEndpoint(ctx, d.pool, tenantID, id, "")
}

func webhookEndpoint(ctx context.Context, q pgbase.Querier, tenantID, id, lock string) (WebhookEndpoint, error) {
	if !pgbase.LooksLikeUUID(id) {
		return WebhookEndpoint{}, parley.Errorf(parley.KindNotFound, "Webhook endpoint not found")
	}
	rows, _ := q.Query(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE tenant_id = $1 AND id = $2 `+lock,
		tenantID, id)
	ep, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[WebhookEndpoint])
	if err != nil {
		return WebhookEndpoint{}, pgbase.NotFound(err, "Webhook endpoint")
	}
	return ep, nil
}

// CreateWebhookEndpoint stores an endpoint, enabled. A tenant has at most
// MaxWebhookEndpoints (KindConflict past that).
func (d *Webhooks) CreateWebhookEndpoint(ctx context.Context, tenantID string, w WebhookEndpointWrite) (ep WebhookEndpoint, err error) {
	events, pii := w.Events.Value, w.PIIFields.Value
	if events == nil {
		events = []string{}
	}
	if pii == nil {
		pii = []string{}
	}
	err = pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		// Serialise creations of one tenant so that the cap holds.
		if _, err := tx.Exec(ctx, `SELECT 1 FROM tenants WHERE id = $1 FOR UPDATE`, tenantID); err != nil {
			return fmt.Errorf("locking tenant: %w", err)
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM webhook_endpoints WHERE tenant_id = $1`, tenantID).Scan(&n); err != nil {
			return fmt.Errorf("counting webhook endpoints: %w", err)
		}
		if n >= MaxWebhookEndpoints {
			return parley.Errorf(parley.KindConflict, "A tenant can have at most %d webhook endpoints; delete one first", MaxWebhookEndpoints)
		}
		rows, _ := tx.Query(ctx, `INSERT INTO webhook_endpoints (tenant_id, url, description, events, pii_fields, secret_sealed)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING `+endpointColumns,
			tenantID, w.URL.Value, w.Description.Value, events, pii, w.SecretSealed)
		ep, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[WebhookEndpoint])
		if err != nil {
			return fmt.Errorf("inserting webhook endpoint: %w", err)
		}
		return nil
	})
	return ep, err
}

// UpdateWebhookEndpoint applies a partial update. Disabling an endpoint drops
// its pending deliveries in the same transaction: none is attempted after
// the update commits (an attempt already under way finishes).
func (d *Webhooks) UpdateWebhookEndpoint(ctx context.Context, tenantID, id string, w WebhookEndpointWrite) (ep WebhookEndpoint, err error) {
	err = pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		before, err := webhookEndpoint(ctx, tx, tenantID, id, "FOR UPDATE")
		if err != nil {
			return err
		}
		var sets []pgbase.SetClause
		sets = pgbase.AddSet(sets, "url", w.URL)
		sets = pgbase.AddSet(sets, "description", w.Description)
		sets = pgbase.AddSet(sets, "events", w.Events)
		sets = pgbase.AddSet(sets, "enabled", w.Enabled)
		sets = pgbase.AddSet(sets, "pii_fields", w.PIIFields)
		if err := pgbase.UpdateTenantRow(ctx, tx, "webhook_endpoints", "Webhook endpoint", tenantID, id, sets); err != nil {
			return fmt.Errorf("updating webhook endpoint: %w", err)
		}
		if before.Enabled && w.Enabled.Set && !w.Enabled.Value {
			if _, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET status = 'dropped', next_attempt_at = NULL,
				updated_at = now() WHERE endpoint_id = $1 AND status = 'pending'`, id); err != nil {
				return fmt.Errorf("dropping pending deliveries: %w", err)
			}
		}
		ep, err = webhookEndpoint(ctx, tx, tenantID, id, "")
		return err
	})
	return ep, err
}

// RotateWebhookSecret replaces an endpoint's signing secret with sealed.
// Every attempt from then on, retries of earlier deliveries included, is
// signed with the new secret only: the old one stops verifying at once.
func (d *Webhooks) RotateWebhookSecret(ctx context.Context, tenantID, id string, sealed []byte) (WebhookEndpoint, error) {
	if !pgbase.LooksLikeUUID(id) {
		return WebhookEndpoint{}, parley.Errorf(parley.KindNotFound, "Webhook endpoint not found")
	}
	rows, _ := d.pool.Query(ctx, `UPDATE webhook_endpoints SET secret_sealed = $3, updated_at = now()
		WHERE tenant_id = $1 AND id = $2 RETURNING `+endpointColumns, tenantID, id, sealed)
	ep, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[WebhookEndpoint])
	if err != nil {
		return WebhookEndpoint{}, pgbase.NotFound(err, "Webhook endpoint")
	}
	return ep, nil
}

// DeleteWebhookEndpoint removes an endpoint and its delivery history; jobs
// still queued for it find nothing to send.
func (d *Webhooks) DeleteWebhookEndpoint(ctx context.Context, tenantID, id string) error {
	return pgbase.DeleteTenantRow(ctx, d.pool, "webhook_endpoints", "Webhook endpoint", tenantID, id)
}

// WebhookDeliveryStats sums the endpoint's deliveries created since since.
func (d *Webhooks) WebhookDeliveryStats(ctx context.Context, tenantID, endpointID string, since time.Time) (DeliveryStats, error) {
	s := DeliveryStats{Since: since.UTC()}
	err := d.pool.QueryRow(ctx, `SELECT count(*),
			count(*) FILTER (WHERE status = 'pending'), count(*) FILTER (WHERE status = 'succeeded'),
			count(*) FILTER (WHERE status = 'failed'), count(*) FILTER (WHERE status = 'dropped'),
			max(last_attempt_at), max(delivered_at)
		FROM webhook_deliveries WHERE tenant_id = $1 AND endpoint_id = $2 AND created_at >= $3`,
		tenantID, endpointID, since).Scan(&s.Total, &s.Pending, &s.Succeeded, &s.Failed, &s.Dropped,
		&s.LastAttemptAt, &s.LastSuccessAt)
	if err != nil {
		return DeliveryStats{}, fmt.Errorf("summing deliveries: %w", err)
	}
	return s, nil
}

// FailingStreak is how many deliveries in a row must have failed their last
// attempt for an endpoint to count as failing.
const FailingStreak = 3

// EndpointHealth is how an endpoint's deliveries go lately: its last success
// (within the deliveries log's retention), the deliveries attempted since the
// window's start and those of them whose last attempt failed, whether the
// last FailingStreak attempted deliveries all failed, and whether the latest
// attempt of the window succeeded.
type EndpointHealth struct {
	LastSuccessAt   *time.Time
	Attempted       int
	Failed          int
	Failing         bool
	LatestSucceeded bool
}

// WebhookHealth returns the health of each of the tenant's endpoints, by id,
// counting deliveries attempted since since.
func (d *Webhooks) WebhookHealth(ctx context.Context, tenantID string, since time.Time) (map[string]EndpointHealth, error) {
	rows, err := d.pool.Query(ctx, `SELECT w.id,
			(SELECT max(d.delivered_at) FROM webhook_deliveries d WHERE d.endpoint_id = w.id),
			(SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = w.id AND d.last_attempt_at >= $2),
			(SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = w.id AND d.last_attempt_at >= $2
				AND d.last_error IS NOT NULL),
			(SELECT count(*) = $3 AND bool_and(r.last_error IS NOT NULL) FROM (SELECT d.last_error FROM webhook_deliveries d
				WHERE d.endpoint_id = w.id AND d.last_attempt_at IS NOT NULL ORDER BY d.last_attempt_at DESC LIMIT $3) r),
			COALESCE((SELECT d.last_error IS NULL FROM webhook_deliveries d WHERE d.endpoint_id = w.id
				AND d.last_attempt_at >= $2 ORDER BY d.last_attempt_at DESC LIMIT 1), false)
		FROM webhook_endpoints w WHERE w.tenant_id = $1`, tenantID, since, FailingStreak)
	if err != nil {
		return nil, fmt.Errorf("reading webhook health: %w", err)
	}
	defer rows.Close()
	out := map[string]EndpointHealth{}
	for rows.Next() {
		var id string
		var h EndpointHealth
		if err := rows.Scan(&id, &h.LastSuccessAt, &h.Attempted, &h.Failed, &h.Failing, &h.LatestSucceeded); err != nil {
			return nil, fmt.Errorf("reading webhook health: %w", err)
		}
		out[id] = h
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading webhook health: %w", err)
	}
	return out, nil
}

// DeliveryFilter selects a page of an endpoint's deliveries.
type DeliveryFilter struct {
	Status string // empty for every status
	Event  string // empty for every event
	Page   int    // 1-based
	Limit  int
}

// ListWebhookDeliveries returns a page of an endpoint's deliveries, newest
// first, and how many match; nothing when the endpoint is not the tenant's
// (callers that answer 404 for it look the endpoint up first).
func (d *Webhooks) ListWebhookDeliveries(ctx context.Context, tenantID, endpointID string, f DeliveryFilter) ([]WebhookDelivery, int, error) {
	if !pgbase.LooksLikeUUID(endpointID) {
		return nil, 0, nil
	}
	where := `tenant_id = $1 AND endpoint_id = $2 AND ($3 = '' OR status = $3) AND ($4 = '' OR event = $4)`
	args := []any{tenantID, endpointID, f.Status, f.Event}
	var total int
	if err := d.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("counting deliveries: %w", err)
	}
	out, err := d.deliveries(ctx, where, append(args, f.Limit, (f.Page-1)*f.Limit))
	return out, total, err
}

// RecentWebhookDeliveries returns the endpoint's latest n deliveries, newest
// first; none when the endpoint is not the tenant's.
func (d *Webhooks) RecentWebhookDeliveries(ctx context.Context, tenantID, endpointID string, n int) ([]WebhookDelivery, error) {
	if !pgbase.LooksLikeUUID(endpointID) {
		return nil, nil
	}
	return d.deliveries(ctx, `tenant_id = $1 AND endpoint_id = $2`, []any{tenantID, endpointID, n, 0})
}

// deliveries runs the page query of the deliveries matching where, whose
// last two arguments are the limit and the offset.
func (d *Webhooks) deliveries(ctx context.Context, where string, args []any) ([]WebhookDelivery, error) {
	n := len(args)
	rows, _ := d.pool.Query(ctx, fmt.Sprintf(`SELECT `+deliveryColumns+` FROM webhook_deliveries WHERE `+where+`
		ORDER BY created_at DESC, id DESC LIMIT $%d OFFSET $%d`, n-1, n), args...)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[WebhookDelivery])
	if err != nil {
		return nil, fmt.Errorf("listing deliveries: %w", err)
	}
	return out, nil
}

// Redeliver queues a past delivery of the endpoint again, with the same
// payload and delivery id, for a full new round of attempts. A delivery still
// pending is a conflict, as is one of a disabled endpoint.
func (d *Webhooks) Redeliver(ctx context.Context, tenantID, endpointID, deliveryID string) (del WebhookDelivery, err error) {
	if !pgbase.LooksLikeUUID(deliveryID) {
		return WebhookDelivery{}, parley.Errorf(parley.KindNotFound, "Delivery not found")
	}
	err = pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		ep, err := webhookEndpoint(ctx, tx, tenantID, endpointID, "FOR SHARE")
		if err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries
			WHERE tenant_id = $1 AND endpoint_id = $2 AND id = $3 FOR UPDATE`, tenantID, endpointID, deliveryID)
		del, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[WebhookDelivery])
		if err != nil {
			return pgbase.NotFound(err, "Delivery")
		}
		if !ep.Enabled {
			return parley.Errorf(parley.KindConflict, "Webhook endpoint is disabled; enable it before redelivering")
		}
		if del.Status == DeliveryPending {
			return parley.Errorf(parley.KindConflict, "Delivery is already queued")
		}
		// A dropped delivery's job may still wait for a retry: it would run
		// beside the new one and could end the new round early, so cancel it.
		if err := d.cancelQueuedDeliveryJob(ctx, tx, deliveryID); err != nil {
			return err
		}
		// attempts counts the current round, so it restarts at 0 (of DeliveryMaxAttempts).
		rows, _ = tx.Query(ctx, `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = now(),
			updated_at = now() WHERE id = $1 RETURNING `+deliveryColumns, deliveryID)
		del, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[WebhookDelivery])
		if err != nil {
			return fmt.Errorf("requeueing delivery: %w", err)
		}
		return insertDeliveryJobs(ctx, tx, d.jobs, []string{deliveryID})
	})
	return del, err
}

// TestEventData is the data of a webhook.test event: Test is always true, so
// that a receiver can tell it from real events whatever it reads first.
type TestEventData struct {
	Test       bool   `json:"test"`
	EndpointID string `json:"endpointId"`
	Message    string `json:"message"`
}

// testEventMessage tells whoever reads a test event's payload what it is.
const testEventMessage = "A test event sent from the dashboard to check this endpoint; it needs no action."

// SendTestEvent records a webhook.test event of the tenant and, in its
// transaction, one delivery of it to the endpoint with its River job: the
// test goes the way of every delivery (signed, retried, in the log). A
// disabled endpoint is a conflict, as it receives nothing.
func (d *Webhooks) SendTestEvent(ctx context.Context, tenantID, endpointID string, at time.Time) (del WebhookDelivery, err error) {
	err = pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		ep, err := webhookEndpoint(ctx, tx, tenantID, endpointID, "FOR SHARE")
		if err != nil {
			return err
		}
		if !ep.Enabled {
			return parley.Errorf(parley.KindConflict, "The endpoint is disabled; enable it to send a test event")
		}
		payload, err := json.Marshal(map[string]any{"event": EventWebhookTest, "createdAt": at.UTC(),
			"data": TestEventData{Test: true, EndpointID: ep.ID, Message: testEventMessage}})
		if err != nil {
			return fmt.Errorf("encoding test event: %w", err)
		}
		var eventID string
		if err := tx.QueryRow(ctx, `INSERT INTO events (tenant_id, type, payload, created_at) VALUES ($1, $2, $3, $4) RETURNING id`,
			tenantID, EventWebhookTest, payload, at).Scan(&eventID); err != nil {
			return fmt.Errorf("recording test event: %w", err)
		}
		rows, _ := tx.Query(ctx, `INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event_id, event)
			VALUES ($1, $2, $3, $4) RETURNING `+deliveryColumns, tenantID, ep.ID, eventID, EventWebhookTest)
		if del, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[WebhookDelivery]); err != nil {
			return fmt.Errorf("enqueueing test delivery: %w", err)
		}
		return insertDeliveryJobs(ctx, tx, d.jobs, []string{del.ID})
	})
	return del, err
}

// WebhookDelivery returns one delivery of the tenant's endpoint.
func (d *Webhooks) WebhookDelivery(ctx context.Context, tenantID, endpointID, id string) (WebhookDelivery, error) {
	if !pgbase.LooksLikeUUID(endpointID) || !pgbase.LooksLikeUUID(id) {
		return WebhookDelivery{}, parley.Errorf(parley.KindNotFound, "Delivery not found")
	}
	rows, _ := d.pool.Query(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries
		WHERE tenant_id = $1 AND endpoint_id = $2 AND id = $3`, tenantID, endpointID, id)
	del, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[WebhookDelivery])
	if err != nil {
		return WebhookDelivery{}, pgbase.NotFound(err, "Delivery")
	}
	return del, nil
}

// cancelQueuedDeliveryJob cancels, in tx, the delivery's last job if it still
// waits to run. A running attempt is left to finish, as is one whose job River
// has already cleaned up.
func (d *Webhooks) cancelQueuedDeliveryJob(ctx context.Context, tx pgx.Tx, deliveryID string) error {
	var jobID *int64
	if err := tx.QueryRow(ctx, `SELECT job_id FROM webhook_deliveries WHERE id = $1`, deliveryID).Scan(&jobID); err != nil {
		return fmt.Errorf("reading delivery job: %w", err)
	}
	if jobID == nil {
		return nil
	}
	job, err := d.jobs.JobGetTx(ctx, tx, *jobID)
	if errors.Is(err, river.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading delivery job: %w", err)
	}
	switch job.State {
	case rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable, rivertype.JobStateScheduled:
		if _, err := d.jobs.JobCancelTx(ctx, tx, job.ID); err != nil && !errors.Is(err, river.ErrNotFound) {
			return fmt.Errorf("cancelling delivery job: %w", err)
		}
	}
	return nil
}

// OutgoingDelivery is what an attempt needs: the delivery, its endpoint and
// the stored (unredacted) payload.
type OutgoingDelivery struct {
	ID              string
	Status          string
	Event           string
	Payload         []byte
	URL             string
	EndpointEnabled bool
	PIIFields       []string
	SecretSealed    []byte
}

// ErrDeliveryGone: the delivery no longer exists (its endpoint or submission
// was deleted).
var ErrDeliveryGone = errors.New("delivery no longer exists")

// DeliveryForAttempt loads a delivery to attempt. It is called by the worker
// outside any tenant context: the job names the delivery only.
func (d *Webhooks) DeliveryForAttempt(ctx context.Context, id string) (OutgoingDelivery, error) {
	var o OutgoingDelivery
	err := d.pool.QueryRow(ctx, `SELECT d.id, d.status, d.event, e.payload, w.url, w.enabled, w.pii_fields, w.secret_sealed
		FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id JOIN events e ON e.id = d.event_id
		WHERE d.id = $1`, id).Scan(&o.ID, &o.Status, &o.Event, &o.Payload, &o.URL, &o.EndpointEnabled, &o.PIIFields, &o.SecretSealed)
	if errors.Is(err, pgx.ErrNoRows) {
		return OutgoingDelivery{}, ErrDeliveryGone
	}
	if err != nil {
		return OutgoingDelivery{}, fmt.Errorf("loading delivery: %w", err)
	}
	return o, nil
}

// DeliveryAttempt is the outcome of one attempt.
type DeliveryAttempt struct {
	At         time.Time
	HTTPStatus *int
	Error      string // empty on success
	Succeeded  bool
	Final      bool       // the last attempt: a failure makes the delivery failed
	NextAt     *time.Time // when the next attempt is due, after a failure that is not final
	Counted    bool       // StartDeliveryAttempt counted the attempt already
}

// StartDeliveryAttempt counts an attempt as it starts, before the request
// goes out: an attempt cut short by a crash is counted too, and the log
// never shows fewer attempts than the receiver saw. The outcome is recorded
// after, with DeliveryAttempt.Counted set.
func (d *Webhooks) StartDeliveryAttempt(ctx context.Context, id string, at time.Time) error {
	_, err := d.pool.Exec(ctx, `UPDATE webhook_deliveries SET attempts = attempts + 1, last_attempt_at = $2, updated_at = now()
		WHERE id = $1 AND status = 'pending'`, id, at)
	if err != nil {
		return fmt.Errorf("starting delivery attempt: %w", err)
	}
	return nil
}

// RecordDeliveryAttempt counts an attempt (unless StartDeliveryAttempt
// did) and its outcome. The status moves
// only from pending: an attempt that finishes after its endpoint was
// disabled is counted, and the delivery stays dropped.
func (d *Webhooks) RecordDeliveryAttempt(ctx context.Context, id string, a DeliveryAttempt) error {
	status := DeliveryPending
	switch {
	case a.Succeeded:
		status = DeliverySucceeded
	case a.Final:
		status = DeliveryFailed
	}
	var lastErr *string
	if a.Error != "" {
		lastErr = &a.Error
	}
	var deliveredAt *time.Time
	if a.Succeeded {
		deliveredAt = &a.At
	}
	_, err := d.pool.Exec(ctx, `UPDATE webhook_deliveries SET attempts = attempts + CASE WHEN $8 THEN 0 ELSE 1 END, last_attempt_at = $2,
			http_status = $3, last_error = $4,
			status = CASE WHEN status = 'pending' THEN $5 ELSE status END,
			next_attempt_at = CASE WHEN status = 'pending' THEN $6::timestamptz END,
			delivered_at = COALESCE($7, delivered_at), updated_at = now()
		WHERE id = $1`, id, a.At, a.HTTPStatus, lastErr, status, a.NextAt, deliveredAt, a.Counted)
	if err != nil {
		return fmt.Errorf("recording delivery attempt: %w", err)
	}
	return nil
}

// DropDelivery marks a pending delivery dropped (its endpoint is disabled).
func (d *Webhooks) DropDelivery(ctx context.Context, id string) error {
	_, err := d.pool.Exec(ctx, `UPDATE webhook_deliveries SET status = 'dropped', next_attempt_at = NULL,
		updated_at = now() WHERE id = $1 AND status = 'pending'`, id)
	if err != nil {
		return fmt.Errorf("dropping delivery: %w", err)
	}
	return nil
}

// DeliveryRetention is how long the deliveries log keeps a settled delivery
// (succeeded, failed or dropped), and an event all of whose deliveries are
// settled: long enough to look into a failure and redeliver it.
const DeliveryRetention = 30 * 24 * time.Hour

// PruneDeliveries deletes the settled deliveries created before cutoff, then
// the events recorded before cutoff that no delivery still needs (a pending
// one). It returns how many of each went.
func (d *Webhooks) PruneDeliveries(ctx context.Context, cutoff time.Time) (deliveries, events int64, err error) {
	err = pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM webhook_deliveries WHERE status <> 'pending' AND created_at < $1`, cutoff)
		if err != nil {
			return fmt.Errorf("pruning deliveries: %w", err)
		}
		deliveries = tag.RowsAffected()
		tag, err = tx.Exec(ctx, `DELETE FROM events e WHERE e.created_at < $1
			AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)`, cutoff)
		if err != nil {
			return fmt.Errorf("pruning events: %w", err)
		}
		events = tag.RowsAffected()
		return nil
	})
	return deliveries, events, err
}
