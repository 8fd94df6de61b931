package business

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

const paymentConnectorColumns = `tenant_id, secret_key, key_mode, key_type, key_last4, is_active, currency,
	default_amount, default_description, success_message, checked_at, check_ok, check_message, created_at, updated_at`

func scanPaymentConnector(row pgx.Row) (parley.PaymentConnector, error) {
	var p parley.PaymentConnector
	err := row.Scan(&p.TenantID, &p.SealedKey, &p.KeyMode, &p.KeyType, &p.KeyLast4, &p.IsActive, &p.Currency,
		&p.DefaultAmount, &p.DefaultDescription, &p.SuccessMessage, &p.CheckedAt, &p.CheckOK, &p.CheckMessage,
		&p.CreatedAt, &p.UpdatedAt)
	return p, err
}

// PaymentConnector reads the tenant's payment connector, nil when it has
// none (like CalendarConnector).
func (d *Business) PaymentConnector(ctx context.Context, tenantID string) (*parley.PaymentConnector, error) {
	return d.paymentConnector(ctx, tenantID, false)
}

// ActivePaymentConnector reads the tenant's payment connector when it is
// active; nil when there is none or it is paused. The chat engine reads it
// for every turn off the voice channel.
func (d *Business) ActivePaymentConnector(ctx context.Context, tenantID string) (*parley.PaymentConnector, error) {
	return d.paymentConnector(ctx, tenantID, true)
}

func (d *Business) paymentConnector(ctx context.Context, tenantID string, activeOnly bool) (*parley.PaymentConnector, error) {
	p, err := scanPaymentConnector(d.pool.QueryRow(ctx, `SELECT `+paymentConnectorColumns+`
		FROM payment_connectors WHERE tenant_id = $1 AND (is_active OR NOT $2)`, tenantID, activeOnly))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the payment connector: %w", err)
	}
	return &p, nil
}

// SavePaymentConnector creates or replaces the tenant's payment connector
// with p (the caller merged a partial update into the stored one). A new key
// forgets the last connection test, which was of the old key. Under an
// If-Match (pgbase.WithIfMatch), only over the connector the client read.
func (d *Business) SavePaymentConnector(ctx context.Context, p parley.PaymentConnector) (parley.PaymentConnector, error) {
	var saved parley.PaymentConnector
	err := pgbase.WriteIfMatch(ctx, d.pool, func(tx pgx.Tx) (string, error) {
		cur, err := scanPaymentConnector(tx.QueryRow(ctx, `SELECT `+paymentConnectorColumns+`
			FROM payment_connectors WHERE tenant_id = $1 FOR UPDATE`, p.TenantID))
		if errors.Is(err, pgx.ErrNoRows) {
			return PaymentETag(nil), nil
		}
		return PaymentETag(&cur), err
	}, func(q pgbase.Querier) error {
		var err error
		saved, err = d.savePaymentConnector(ctx, q, p)
		return err
	})
	if err != nil {
		return saved, fmt.Errorf("saving the payment connector: %w", err)
	}
	return saved, nil
}

// PaymentETag is the ETag of the tenant's payment connector as stored (GET
// and PUT /tenants/{slug}/integrations/payments), "" for none: a write
// under an If-Match then fails, there being nothing the client read.
func PaymentETag(p *parley.PaymentConnector) string {
	if p == nil {
		return ""
	}
	return pgbase.ETag(p)
}

// savePaymentConnector is SavePaymentConnector's statement, on q.
func (d *Business) savePaymentConnector(ctx context.Context, q pgbase.Querier, p parley.PaymentConnector) (parley.PaymentConnector, error) {
	return scanPaymentConnector(q.QueryRow(ctx, `INSERT INTO payment_connectors (tenant_id, secret_key,
			key_mode, key_type, key_last4, is_active, currency, default_amount, default_description, success_message)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (tenant_id) DO UPDATE SET secret_key = EXCLUDED.secret_key, key_mode = EXCLUDED.key_mode,
			key_type = EXCLUDED.key_type, key_last4 = EXCLUDED.key_last4, is_active = EXCLUDED.is_active,
			currency = EXCLUDED.currency, default_amount = EXCLUDED.default_amount,
			default_description = EXCLUDED.default_description, success_message = EXCLUDED.success_message,
			checked_at = CASE WHEN payment_connectors.secret_key = EXCLUDED.secret_key THEN payment_connectors.checked_at END,
			check_ok = CASE WHEN payment_connectors.secret_key = EXCLUDED.secret_key THEN payment_connectors.check_ok END,
			check_message = CASE WHEN payment_connectors.secret_key = EXCLUDED.secret_key THEN payment_connectors.check_message END,
			updated_at = now()
		RETURNING `+paymentConnectorColumns,
		p.TenantID, p.SealedKey, p.KeyMode, p.KeyType, p.KeyLast4, p.IsActive, p.Currency, p.DefaultAmount,
		p.DefaultDescription, p.SuccessMessage))
}

// RecordPaymentCheck keeps the outcome of a connection test of the stored
// key (sealed: the key tested), unless the key changed meanwhile.
func (d *Business) RecordPaymentCheck(ctx context.Context, tenantID string, sealedKey []byte, ok bool, message string, at time.Time) error {
	_, err := d.pool.Exec(ctx, `UPDATE payment_connectors SET checked_at = $4, check_ok = $3, check_message = $5
		WHERE tenant_id = $1 AND secret_key = $2`, tenantID, sealedKey, ok, at, pgbase.StorableKey(message))
	if err != nil {
		return fmt.Errorf("recording the payment connection test: %w", err)
	}
	return nil
}

// DeletePaymentConnector removes the tenant's payment connector and its key;
// false when there was none. The payment links already sent stay valid at
// Stripe, and their submissions stay.
func (d *Business) DeletePaymentConnector(ctx context.Context, tenantID string) (bool, error) {
	tag, err := d.pool.Exec(ctx, `DELETE FROM payment_connectors WHERE tenant_id = $1`, tenantID)
	if err != nil {
		return false, fmt.Errorf("deleting the payment connector: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}

// maxConversationPayments bounds the quotes and links one turn reads back.
const maxConversationPayments = 50

// ConversationPayments returns the conversation's quotes (GENERATE_QUOTE)
// and payment links (COLLECT_PAYMENT) submissions, newest first.
func (d *Business) ConversationPayments(ctx context.Context, tenantID, conversationID string) ([]parley.Submission, error) {
	if !pgbase.LooksLikeUUID(conversationID) {
		return nil, nil
	}
	rows, _ := d.pool.Query(ctx, `SELECT `+pgbase.SubmissionColumns+` FROM submissions
		WHERE conversation_id = $2 AND tool_type IN ('GENERATE_QUOTE', 'COLLECT_PAYMENT') AND tenant_id = $1
		ORDER BY created_at DESC, id DESC LIMIT $3`, tenantID, conversationID, maxConversationPayments)
	subs, err := pgx.CollectRows(rows, pgx.RowToStructByName[parley.Submission])
	if err != nil {
		return nil, fmt.Errorf("listing the conversation's quotes and payments: %w", err)
	}
	return subs, nil
}
