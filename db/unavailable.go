package db

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unreachable reports whether err means that the database could not be
// reached or went away under the statement, rather than refusing it: a
// connection refused or cut, a server shutting down, starting up or in
// recovery, one that answers read-only (a standby that has not been promoted
// yet, or the old primary of a failover), too many connections, or a pool
// that could not hand out a connection before the request's deadline while
// its connections were being re-established. Such a failure passes: the web
// server answers it 503 with Retry-After, never 500, and a client may send
// the request again (README, "Retrying requests").
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "08"): // connection_exception
			return true
		case pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03": // admin/crash shutdown, cannot connect now
			return true
		case pgErr.Code == "53300": // too_many_connections
			return true
		case pgErr.Code == "25006": // read_only_sql_transaction: a standby, or a demoted primary
			return true
		}
		return false
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		// The request's own deadline or its client leaving (a
		// context error is a net.Error too): not the database's doing.
		return false
	}
	if pgconn.SafeToRetry(err) {
		return true
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return false // an HTTP call's (a model, a webhook), not the database's
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	// pgx reports a statement on a connection that closed under it as "conn
	// closed and a pool closed as the server stops as "closed pool" (no
	// exported sentinels).
	msg := err.Error()
	return strings.Contains(msg, "conn closed") || strings.Contains(msg, "closed pool")
}
