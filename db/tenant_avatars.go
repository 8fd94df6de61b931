package db

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// Avatar is a bot picture a tenant uploaded.
type Avatar struct {
	ContentType string
	Data        []byte
	SHA         string // hex SHA-256 of Data
}

// SaveAvatar stores the tenant's uploaded avatar and points the tenant's
// bot avatar at it (address(sha) is its public address), in one
// transaction. It returns the stored avatar.
func (d *DB) SaveAvatar(ctx context.Context, tenantID, contentType string, data []byte, address func(sha string) string) (Avatar, error) {
	sum := sha256.Sum256(data)
	a := Avatar{ContentType: contentType, Data: data, SHA: hex.EncodeToString(sum[:])}
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO tenant_avatars (tenant_id, content_type, data, sha) VALUES ($1, $2, $3, $4)
			ON CONFLICT (tenant_id) DO UPDATE SET content_type = $2, data = $3, sha = $4, updated_at = now()`,
			tenantID, contentType, data, a.SHA); err != nil {
			return fmt.Errorf("storing avatar: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE tenants SET bot_avatar = $2, avatar_type = 'UPLOAD', updated_at = now() WHERE id = $1`,
			tenantID, address(a.SHA)); err != nil {
			return fmt.Errorf("pointing the tenant at its avatar: %w", err)
		}
		return nil
	})
	return a, err
}

// RemoveAvatar deletes the tenant's uploaded avatar and clears its bot
// avatar if it pointed there (starts with prefix).
func (d *DB) RemoveAvatar(ctx context.Context, tenantID, prefix string) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM tenant_avatars WHERE tenant_id = $1`, tenantID); err != nil {
			return fmt.Errorf("deleting avatar: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE tenants SET bot_avatar = NULL, avatar_type = 'DEFAULT', updated_at = now()
			WHERE id = $1 AND starts_with(bot_avatar, $2)`, tenantID, prefix); err != nil {
			return fmt.Errorf("clearing the tenant's avatar: %w", err)
		}
		return nil
	})
}

// AvatarBySlug returns the avatar uploaded by the tenant with that slug.
func (d *DB) AvatarBySlug(ctx context.Context, slug string) (Avatar, error) {
	var a Avatar
	if !pgbase.Storable(slug) {
		return a, parley.Errorf(parley.KindNotFound, "Avatar not found")
	}
	err := d.pool.QueryRow(ctx, `SELECT a.content_type, a.data, a.sha FROM tenant_avatars a JOIN tenants t ON t.id = a.tenant_id
		WHERE t.slug = $1`, slug).Scan(&a.ContentType, &a.Data, &a.SHA)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, parley.Errorf(parley.KindNotFound, "Avatar not found")
	}
	if err != nil {
		return a, fmt.Errorf("reading avatar: %w", err)
	}
	return a, nil
}
