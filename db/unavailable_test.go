package db_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// Unreachable tells a database that went away (answered 503 with
// Retry-After) from one that refused the statement or a failure of ours
// (answered as before).
func TestUnreachable(t *testing.T) {
	t.Parallel()
	_, connectErr := pgx.Connect(context.Background(), "postgres://nobody@127.0.0.1:1/none?connect_timeout=2")
	if connectErr == nil {
		t.Fatal("connecting to port 1 succeeded")
	}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", connectErr, true},
		{"wrapped connection refused", fmt.Errorf("reading tenant: %w", connectErr), true},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"cannot connect now", &pgconn.PgError{Code: "57P03"}, true},
		{"connection failure", &pgconn.PgError{Code: "08006"}, true},
		{"too many connections", &pgconn.PgError{Code: "53300"}, true},
		{"read-only standby", &pgconn.PgError{Code: "25006"}, true},
		{"cut mid-statement", fmt.Errorf("saving turn: %w", io.ErrUnexpectedEOF), true},
		{"network", &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}, true},
		{"conn closed", errors.New("conn closed"), true},
		{"an HTTP call's", fmt.Errorf("calling the model: %w", &url.Error{Op: "Post", URL: "http://127.0.0.1:1", Err: &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}}), false},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"syntax error", &pgconn.PgError{Code: "42601"}, false},
		{"no rows", pgx.ErrNoRows, false},
		{"not found", parley.Errorf(parley.KindNotFound, "Segment not found"), false},
		{"cancelled", context.Canceled, false},
		{"the request's deadline", fmt.Errorf("reading: %w", context.DeadlineExceeded), false},
		{"nil", nil, false},
	} {
		if got := db.Unreachable(tc.err); got != tc.want {
			t.Errorf("%s (%v): Unreachable %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
