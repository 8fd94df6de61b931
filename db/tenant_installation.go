package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// WidgetSighting is where and when the widget last loaded on a tenant's site.
type WidgetSighting struct {
	At     time.Time
	Origin string
}

// NoteWidgetSeen records that the widget loaded on origin at now. It writes
// at most once an hour per tenant (a sighting already recorded in the hour
// before now is kept), so a busy site costs one indexed read per load.
func (d *DB) NoteWidgetSeen(ctx context.Context, tenantID, origin string, now time.Time) error {
	_, err := d.pool.Exec(ctx, `UPDATE tenants SET widget_seen_at = $3::timestamptz, widget_seen_origin = $2
		WHERE id = $1 AND (widget_seen_at IS NULL OR widget_seen_at < $3::timestamptz - interval '1 hour')`, tenantID, origin, now)
	if err != nil {
		return fmt.Errorf("noting the widget's installation: %w", err)
	}
	return nil
}

// WidgetSeen returns the tenant's last recorded sighting of the widget, nil
// when the widget never loaded on one of its sites.
func (d *DB) WidgetSeen(ctx context.Context, tenantID string) (*WidgetSighting, error) {
	var at *time.Time
	var origin *string
	err := d.pool.QueryRow(ctx, `SELECT widget_seen_at, widget_seen_origin FROM tenants WHERE id = $1`, tenantID).Scan(&at, &origin)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && (at == nil || origin == nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the widget's installation: %w", err)
	}
	return &WidgetSighting{At: *at, Origin: *origin}, nil
}
