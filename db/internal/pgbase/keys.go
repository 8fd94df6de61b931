package pgbase

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
)

// LooksLikeUUID tells ids from slugs in paths that accept either.
func LooksLikeUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
				return false
			}
		}
	}
	return true
}

// LockTenant serialises segment writes of one tenant: the limit check and the
// one-default rule then hold under concurrent requests.
func LockTenant(ctx context.Context, tx pgx.Tx, tenantID string) error {
	_, err := tx.Exec(ctx, `SELECT 1 FROM tenants WHERE id = $1 FOR UPDATE`, tenantID)
	return err
}

// EscapeLike escapes LIKE wildcards in user input.
func EscapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
