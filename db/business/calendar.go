package business

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

const calendarConnectorColumns = `tenant_id, server_url, username, password, calendar_url, calendar_name,
	office_hours, created_at, updated_at`

func scanCalendarConnector(row pgx.Row) (parley.CalendarConnector, error) {
	var c parley.CalendarConnector
	err := row.Scan(&c.TenantID, &c.ServerURL, &c.Username, &c.SealedPassword, &c.CalendarURL, &c.CalendarName,
		&c.OfficeHours, &c.CreatedAt, &c.UpdatedAt)
	return c, err
}

// CalendarETag is the ETag of the tenant's calendar connector as stored
// (GET and PUT /tenants/{slug}/integrations/calendar), "" for none: a write
// under an If-Match then fails, there being nothing the client read.
func CalendarETag(c *parley.CalendarConnector) string {
	if c == nil {
		return ""
	}
	return pgbase.ETag(c)
}

// CalendarConnector returns the tenant's calendar connector, nil when it has none.
func (d *Business) CalendarConnector(ctx context.Context, tenantID string) (*parley.CalendarConnector, error) {
	c, err := scanCalendarConnector(d.pool.QueryRow(ctx, `SELECT `+calendarConnectorColumns+`
		FROM calendar_connectors WHERE tenant_id = $1`, tenantID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the calendar connector: %w", err)
	}
	return &c, nil
}

// SaveCalendarConnector creates or replaces the tenant's calendar connector;
// under an If-Match (pgbase.WithIfMatch), only the connector the client read.
func (d *Business) SaveCalendarConnector(ctx context.Context, c parley.CalendarConnector) (parley.CalendarConnector, error) {
	if c.OfficeHours == nil {
		c.OfficeHours = parley.OfficeHours{}
	}
	var saved parley.CalendarConnector
	err := pgbase.WriteIfMatch(ctx, d.pool, func(tx pgx.Tx) (string, error) {
		cur, err := scanCalendarConnector(tx.QueryRow(ctx, `SELECT `+calendarConnectorColumns+`
			FROM calendar_connectors WHERE tenant_id = $1 FOR UPDATE`, c.TenantID))
		if errors.Is(err, pgx.ErrNoRows) {
			return CalendarETag(nil), nil
		}
		return CalendarETag(&cur), err
	}, func(q pgbase.Querier) error {
		// The row as stored, so that its ETag is what a read gives.
		var err error
		saved, err = scanCalendarConnector(q.QueryRow(ctx, `INSERT INTO calendar_connectors (tenant_id, server_url, username, password,
			calendar_url, calendar_name, office_hours)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (tenant_id) DO UPDATE SET server_url = EXCLUDED.server_url, username = EXCLUDED.username,
			password = EXCLUDED.password, calendar_url = EXCLUDED.calendar_url, calendar_name = EXCLUDED.calendar_name,
			office_hours = EXCLUDED.office_hours, updated_at = now()
		RETURNING `+calendarConnectorColumns,
			c.TenantID, c.ServerURL, c.Username, c.SealedPassword, c.CalendarURL, c.CalendarName, c.OfficeHours))
		return err
	})
	if err != nil {
		return c, fmt.Errorf("saving the calendar connector: %w", err)
	}
	return saved, nil
}

// DeleteCalendarConnector removes the tenant's calendar connector; it
// reports whether there was one.
func (d *Business) DeleteCalendarConnector(ctx context.Context, tenantID string) (bool, error) {
	tag, err := d.pool.Exec(ctx, `DELETE FROM calendar_connectors WHERE tenant_id = $1`, tenantID)
	if err != nil {
		return false, fmt.Errorf("deleting the calendar connector: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}

// LockCalendar runs fn while holding the tenant's calendar lock (a
// transaction-level advisory lock), so that two bookings of one tenant, on
// any instance, check the calendar and create their events one after the
// other. fn runs on no connection of the transaction: it talks to the
// calendar server, and the lock only holds a pool connection meanwhile.
func (d *Business) LockCalendar(ctx context.Context, tenantID string, fn func(context.Context) error) error {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("locking the calendar: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('calendar:' || $1::text, 0))`, tenantID); err != nil {
		return fmt.Errorf("locking the calendar: %w", err)
	}
	if err := fn(ctx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
