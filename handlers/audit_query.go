package handlers

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parley/parley/db/audit"
)

// The audit log listing's page sizes: the REST API's default and maximum.
const (
	DefaultAuditLimit = 50
	MaxAuditLimit     = 100
)

// CheckAuditFilter reads and checks the query of an audit log listing, the
// REST API's and the dashboard's alike: actorKind, actorId, action (an
// action or an area alone), from and to (an RFC 3339 date-time, or a
// YYYY-MM-DD date in loc, to taking that whole day in), denied (true or
// false), cursor (the previous page's nextCursor) and limit.
func CheckAuditFilter(q url.Values, loc *time.Location) (audit.Filter, error) {
	f := audit.Filter{Limit: DefaultAuditLimit}
	var err error
	if v := q.Get("limit"); v != "" {
		if f.Limit, err = strconv.Atoi(v); err != nil || f.Limit < 1 || f.Limit > MaxAuditLimit {
			return f, QueryError("limit", fmt.Sprintf("must be an integer between 1 and %d", MaxAuditLimit))
		}
	}
	if f.ActorKind = q.Get("actorKind"); f.ActorKind != "" && !slices.Contains(audit.ActorKinds, f.ActorKind) {
		return f, QueryError("actorKind", "must be one of "+strings.Join(audit.ActorKinds, ", "))
	}
	if f.ActorID = strings.TrimSpace(q.Get("actorId")); len(f.ActorID) > 200 {
		return f, QueryError("actorId", "must be at most 200 characters")
	}
	if f.Action = q.Get("action"); f.Action != "" {
		if _, ok := audit.Words[f.Action]; !ok && !slices.Contains(audit.Areas(), f.Action) {
			return f, QueryError("action", "must be one of the audit log's actions (such as webhook.deleted) or areas (such as webhook)")
		}
	}
	if f.From, err = parseTime(q, "from", false, loc); err != nil {
		return f, err
	}
	if f.To, err = parseTime(q, "to", true, loc); err != nil {
		return f, err
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.To.After(f.From) {
		return f, QueryError("to", "must be after from")
	}
	switch q.Get("denied") {
	case "", "false":
	case "true":
		f.DeniedOnly = true
	default:
		return f, QueryError("denied", "must be true or false")
	}
	if v := q.Get("cursor"); v != "" {
		cur, err := audit.ParseCursor(v)
		if err != nil {
			return f, QueryError("cursor", "must be the nextCursor of a previous page")
		}
		f.After = &cur
	}
	return f, nil
}

// parseTime is timeParamIn over a query's values.
func parseTime(q url.Values, name string, endOfDay bool, loc *time.Location) (time.Time, error) {
	v := q.Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	t, err := time.ParseInLocation(time.DateOnly, v, loc)
	if err != nil {
		return time.Time{}, QueryError(name, "must be an RFC 3339 date-time or a YYYY-MM-DD date")
	}
	if endOfDay {
		t = t.AddDate(0, 0, 1)
	}
	return t, nil
}
