package audit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley/db/internal/pgbase"
)

// ActorKinds lists the kinds of actor, in the order the filters show them.
var ActorKinds = []string{ActorPerson, ActorToken, ActorOAuth, ActorOperator, ActorSystem}

// Areas lists the areas of the actions ("token" of "token.created"), sorted.
func Areas() []string {
	var out []string
	for a := range Words {
		area, _, _ := strings.Cut(a, ".")
		if !slices.Contains(out, area) {
			out = append(out, area)
		}
	}
	slices.Sort(out)
	return out
}

// Actions lists the actions, sorted.
func Actions() []string {
	out := make([]string, 0, len(Words))
	for a := range Words {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// Cursor is where a page of the log ends: the listing's next page starts
// strictly after (older than) it.
type Cursor struct {
	At time.Time
	ID int64
}

// String is the cursor as the API and the dashboard pass it: the entry's
// time in Unix microseconds and its id.
func (c Cursor) String() string {
	return strconv.FormatInt(c.At.UnixMicro(), 10) + "." + strconv.FormatInt(c.ID, 10)
}

// ErrBadCursor is the error of a cursor that no listing gave.
var ErrBadCursor = errors.New("not a cursor of this listing")

// ParseCursor reads a cursor that String wrote.
func ParseCursor(s string) (Cursor, error) {
	at, id, ok := strings.Cut(s, ".")
	if !ok {
		return Cursor{}, ErrBadCursor
	}
	micros, err1 := strconv.ParseInt(at, 10, 64)
	n, err2 := strconv.ParseInt(id, 10, 64)
	if err1 != nil || err2 != nil || micros < 0 || n <= 0 {
		return Cursor{}, ErrBadCursor
	}
	return Cursor{At: time.UnixMicro(micros).UTC(), ID: n}, nil
}

// Filter is what a listing of the log keeps; its zero values keep
// everything. The handlers check the values (handlers.CheckAuditFilter).
type Filter struct {
	// ActorKind is one of ActorKinds.
	ActorKind string
	// ActorID is a person's user id, a token's id or an OAuth client's id.
	ActorID string
	// Action is an action ("webhook.deleted") or an area alone ("webhook").
	Action string
	// From and To bound the time: From <= at < To.
	From, To time.Time
	// DeniedOnly keeps the refusals only.
	DeniedOnly bool
	// After continues a listing: entries older than the cursor.
	After *Cursor
	// Limit is the page's size.
	Limit int
}

// Page is one page of the log, newest first; Next is the cursor of the
// page after it, nil on the last page.
type Page struct {
	Entries []Entry
	Next    *Cursor
}

// ListAudit reads a page of tenantID's log, newest first, keyset-paginated
// on (at, id) along the index audit_log_tenant_at.
func (l *Log) ListAudit(ctx context.Context, tenantID string, f Filter) (Page, error) {
	if !pgbase.LooksLikeUUID(tenantID) || f.Limit <= 0 {
		return Page{}, nil
	}
	where := []string{"tenant_id = $1"}
	args := []any{tenantID}
	add := func(cond string, v ...any) {
		for _, a := range v {
			args = append(args, a)
			cond = strings.Replace(cond, "?", "$"+strconv.Itoa(len(args)), 1)
		}
		where = append(where, cond)
	}
	if f.ActorKind != "" {
		add("actor_kind = ?", f.ActorKind)
	}
	if f.ActorID != "" {
		add("actor_id = ?", pgbase.StorableKey(f.ActorID))
	}
	if f.Action != "" {
		if strings.Contains(f.Action, ".") {
			add("action = ?", f.Action)
		} else {
			add("action LIKE ?", pgbase.EscapeLike(f.Action)+".%")
		}
	}
	if !f.From.IsZero() {
		add("at >= ?", f.From)
	}
	if !f.To.IsZero() {
		add("at < ?", f.To)
	}
	if f.DeniedOnly {
		where = append(where, "denied")
	}
	if f.After != nil {
		add("(at, id) < (?, ?)", f.After.At, f.After.ID)
	}
	args = append(args, f.Limit+1)
	rows, err := l.pool.Query(ctx, `SELECT id, tenant_id::text, at, actor_kind, actor_id, actor_name, action, target, target_id, denied, address, details
		FROM audit_log WHERE `+strings.Join(where, " AND ")+`
		ORDER BY at DESC, id DESC LIMIT $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return Page{}, fmt.Errorf("listing the audit log: %w", err)
	}
	entries, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Entry, error) {
		var e Entry
		err := row.Scan(&e.ID, &e.TenantID, &e.At, &e.Actor.Kind, &e.Actor.ID, &e.Actor.Name, &e.Action, &e.Target, &e.TargetID,
			&e.Denied, &e.Address, &e.Details)
		return e, err
	})
	if err != nil {
		return Page{}, fmt.Errorf("listing the audit log: %w", err)
	}
	var p Page
	if len(entries) > f.Limit {
		entries = entries[:f.Limit]
		last := entries[len(entries)-1]
		p.Next = &Cursor{At: last.At, ID: last.ID}
	}
	p.Entries = entries
	return p, nil
}

// pruneBatch is how many entries one statement of PruneAudit deletes, so
// that a first prune of a large log holds no long lock.
const pruneBatch = 5000

// PruneAudit deletes every tenant's entries older than before (now minus
// Keep, for the clean-up job) and reports how many went.
func (l *Log) PruneAudit(ctx context.Context, before time.Time) (int64, error) {
	var total int64
	for {
		tag, err := l.pool.Exec(ctx, `DELETE FROM audit_log WHERE id IN (
			SELECT id FROM audit_log WHERE at < $1 LIMIT $2)`, before, pruneBatch)
		if err != nil {
			return total, fmt.Errorf("pruning the audit log: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < pruneBatch {
			return total, nil
		}
	}
}

// OAuthActorName is who acts with the OAuth access token jti of tenantID:
// its client's name and the email of the member who granted it. The REST
// API and the MCP server name an OAuth actor only when they record (rarely),
// so that the token's check on every request stays one statement.
func (l *Log) OAuthActorName(ctx context.Context, tenantID, jti string) (client, email string, err error) {
	if !pgbase.LooksLikeUUID(tenantID) || !pgbase.Storable(jti) {
		return "", "", nil
	}
	err = l.pool.QueryRow(ctx, `SELECT c.client_name, u.email
		FROM oauth_access_tokens a JOIN oauth_grants g ON g.id = a.grant_id
		JOIN oauth_clients c ON c.id = g.client_id JOIN users u ON u.id = g.user_id
		WHERE a.jti = $1 AND g.tenant_id = $2`, jti, tenantID).Scan(&client, &email)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("naming the OAuth actor: %w", err)
	}
	return client, email, nil
}

// OAuthClientName is the name of the OAuth client id, "" when there is none.
func (l *Log) OAuthClientName(ctx context.Context, id string) (string, error) {
	if !pgbase.Storable(id) {
		return "", nil
	}
	var name string
	err := l.pool.QueryRow(ctx, `SELECT client_name FROM oauth_clients WHERE id = $1`, id).Scan(&name)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("naming the OAuth client: %w", err)
	}
	return name, nil
}

// actorsScan is how many of the latest entries AuditActors reads: the
// dashboard asks on every page, and the whole log of a busy tenant (300,000
// entries) took half a second to group; the latest 5,000 take a few
// milliseconds and hold whoever is active.
const actorsScan = 5000

// AuditActors lists the actors with an id (people, tokens, OAuth apps) of
// tenantID's latest entries, the most recently active first, at most n,
// each with its latest name: the choices of the dashboard's "who" filter.
func (l *Log) AuditActors(ctx context.Context, tenantID string, n int) ([]Actor, error) {
	if !pgbase.LooksLikeUUID(tenantID) {
		return nil, nil
	}
	rows, err := l.pool.Query(ctx, `SELECT actor_kind, actor_id, actor_name FROM (
			SELECT DISTINCT ON (actor_kind, actor_id) actor_kind, actor_id, actor_name, at
			FROM (SELECT actor_kind, actor_id, actor_name, at FROM audit_log
				WHERE tenant_id = $1 ORDER BY at DESC, id DESC LIMIT $3) recent
			WHERE actor_id <> ''
			ORDER BY actor_kind, actor_id, at DESC) latest
		ORDER BY at DESC LIMIT $2`, tenantID, n, actorsScan)
	if err != nil {
		return nil, fmt.Errorf("listing the audit log's actors: %w", err)
	}
	actors, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Actor, error) {
		var a Actor
		err := row.Scan(&a.Kind, &a.ID, &a.Name)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("listing the audit log's actors: %w", err)
	}
	return actors, nil
}
