package pgbase

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/parley/parley"
)

// NotFound turns pgx.ErrNoRows into a not-found Error and wraps anything else.
func NotFound(err error, what string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return parley.Errorf(parley.KindNotFound, "%s not found", what)
	}
	return fmt.Errorf("reading %s: %w", what, err)
}

// IsUniqueViolation reports whether err is a violation of the named unique constraint
// (any unique constraint when name is empty).
func IsUniqueViolation(err error, name string) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return name == "" || pgErr.ConstraintName == name
	}
	return false
}
