package visitors

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// VisitorDetail adds counts to a visitor.
type VisitorDetail struct {
	parley.Visitor
	ConversationCount int `db:"conversation_count"`
	MemoryCount       int `db:"memory_count"`
	// ContactEmail is the email last given in a lead form (NoteContactInTx):
	// not verified, never the visitor's identity.
	ContactEmail *string `db:"contact_email"`
}

const visitorColumns = `id, tenant_id, email, display_name, phone, auth_provider, external_id, metadata, created_at, updated_at, ` +
	anonymousColumn

// anonymousColumn is parley.Visitor's Anonymous: known by the widget's
// anonymous id alone, with neither an email nor an externalId.
const anonymousColumn = `(anonymous_key IS NOT NULL AND email IS NULL AND external_id IS NULL) AS anonymous`

// VisitorWrite is a visitor create or partial update.
type VisitorWrite struct {
	Email        parley.Opt[string]
	DisplayName  parley.Opt[string]
	Phone        parley.Opt[string]
	AuthProvider parley.Opt[string]
	ExternalID   parley.Opt[string]
	Metadata     parley.Opt[json.RawMessage]
}

func visitorConflict(err error) error {
	switch {
	case pgbase.IsUniqueViolation(err, "visitors_email"):
		return &parley.Error{Kind: parley.KindConflict, Message: "A visitor with this email already exists",
			Details: map[string]string{"email": "already used by another visitor"}}
	case pgbase.IsUniqueViolation(err, "visitors_external_id"):
		return &parley.Error{Kind: parley.KindConflict, Message: "A visitor with this externalId already exists",
			Details: map[string]string{"externalId": "already used by another visitor"}}
	}
	return nil
}

// ListVisitors returns a page of visitors, newest first, and the total.
// search matches email, display name or external id (case-insensitive substring).
func (d *Visitors) ListVisitors(ctx context.Context, tenantID, search string, limit, offset int) ([]parley.Visitor, int, error) {
	where := " WHERE tenant_id = $1"
	args := []any{tenantID}
	if search != "" {
		args = append(args, "%"+pgbase.EscapeLike(search)+"%")
		where += ` AND (coalesce(email, '') || ' ' || coalesce(display_name, '') || ' ' || coalesce(external_id, '')) ILIKE $2`
	}
	var total int
	if err := d.pool.QueryRow(ctx, `SELECT count(*) FROM visitors`+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("counting visitors: %w", err)
	}
	args = append(args, limit, offset)
	rows, _ := d.pool.Query(ctx, `SELECT `+visitorColumns+` FROM visitors`+where+
		fmt.Sprintf(" ORDER BY created_at DESC, id LIMIT $%d OFFSET $%d", len(args)-1, len(args)), args...)
	vs, err := pgx.CollectRows(rows, pgx.RowToStructByName[parley.Visitor])
	if err != nil {
		return nil, 0, fmt.Errorf("listing visitors: %w", err)
	}
	return vs, total, nil
}

// VisitorDetail returns one visitor with its counts.
func (d *Visitors) VisitorDetail(ctx context.Context, tenantID, id string) (VisitorDetail, error) {
	if !pgbase.LooksLikeUUID(id) {
		return VisitorDetail{}, parley.Errorf(parley.KindNotFound, "Visitor not found")
	}
	rows, _ := d.pool.Query(ctx, `SELECT `+visitorColumns+`, contact_email,
		(SELECT count(*) FROM conversations c WHERE c.visitor_id = v.id) AS conversation_count,
		(SELECT count(*) FROM memory_facts m WHERE m.visitor_id = v.id) AS memory_count
		FROM visitors v WHERE tenant_id = $1 AND id = $2`, tenantID, id)
	v, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[VisitorDetail])
	if err != nil {
		return VisitorDetail{}, pgbase.NotFound(err, "Visitor")
	}
	return v, nil
}

func visitorSets(w VisitorWrite) []pgbase.SetClause {
	var sets []pgbase.SetClause
	sets = pgbase.AddSet(sets, "email", w.Email)
	sets = pgbase.AddSet(sets, "display_name", w.DisplayName)
	sets = pgbase.AddSet(sets, "phone", w.Phone)
	sets = pgbase.AddSet(sets, "auth_provider", w.AuthProvider)
	sets = pgbase.AddSet(sets, "external_id", w.ExternalID)
	if w.Metadata.Set {
		m := w.Metadata.Value
		if m == nil {
			m = json.RawMessage("{}")
		}
		sets = append(sets, pgbase.SetClause{Column: "metadata", Value: m})
	}
	return sets
}

// CreateVisitor stores a visitor.
func (d *Visitors) CreateVisitor(ctx context.Context, tenantID string, w VisitorWrite) (VisitorDetail, error) {
	cols := []string{"tenant_id"}
	vals := []string{"$1"}
	args := []any{tenantID}
	for _, s := range visitorSets(w) {
		args = append(args, s.Value)
		cols = append(cols, s.Column)
		vals = append(vals, fmt.Sprintf("$%d", len(args)))
	}
	var id string
	err := d.pool.QueryRow(ctx, `INSERT INTO visitors (`+strings.Join(cols, ", ")+`) VALUES (`+strings.Join(vals, ", ")+`) RETURNING id`, args...).Scan(&id)
	if e := visitorConflict(err); e != nil {
		return VisitorDetail{}, e
	}
	if err != nil {
		return VisitorDetail{}, fmt.Errorf("inserting visitor: %w", err)
	}
	return d.VisitorDetail(ctx, tenantID, id)
}

// UpdateVisitor applies a partial update. The row must keep an email or an
// externalId, unless it is an anonymous visitor's (the widget's anonymous id
// keeps naming it).
func (d *Visitors) UpdateVisitor(ctx context.Context, tenantID, id string, w VisitorWrite) (VisitorDetail, error) {
	if !pgbase.LooksLikeUUID(id) {
		return VisitorDetail{}, parley.Errorf(parley.KindNotFound, "Visitor not found")
	}
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		sql, args := pgbase.UpdateSQL("visitors", "tenant_id = $1 AND id = $2 RETURNING email IS NOT NULL OR external_id IS NOT NULL OR anonymous_key IS NOT NULL",
			[]any{tenantID, id}, visitorSets(w))
		var identified bool
		err := tx.QueryRow(ctx, sql, args...).Scan(&identified)
		if e := visitorConflict(err); e != nil {
			return e
		}
		if err != nil {
			return pgbase.NotFound(err, "Visitor")
		}
		if !identified {
			return &parley.Error{Kind: parley.KindInvalid, Message: "A visitor needs an email or an externalId",
				Details: map[string]string{"email": "cannot clear both email and externalId"}}
		}
		return nil
	})
	if err != nil {
		return VisitorDetail{}, err
	}
	return d.VisitorDetail(ctx, tenantID, id)
}

// DeleteVisitor deletes a visitor; memory facts go with it (and, once they
// exist, conversations; submissions keep a null visitor link).
func (d *Visitors) DeleteVisitor(ctx context.Context, tenantID, id string) error {
	return pgbase.DeleteTenantRow(ctx, d.pool, "visitors", "Visitor", tenantID, id)
}

// visitorExists checks the visitor belongs to the tenant.
func (d *Visitors) visitorExists(ctx context.Context, tenantID, visitorID string) error {
	if !pgbase.LooksLikeUUID(visitorID) {
		return parley.Errorf(parley.KindNotFound, "Visitor not found")
	}
	var ok bool
	if err := d.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM visitors WHERE tenant_id = $1 AND id = $2)`, tenantID, visitorID).Scan(&ok); err != nil {
		return fmt.Errorf("finding visitor: %w", err)
	}
	if !ok {
		return parley.Errorf(parley.KindNotFound, "Visitor not found")
	}
	return nil
}

// ListMemory lists a visitor's facts by key.
func (d *Visitors) ListMemory(ctx context.Context, tenantID, visitorID string) ([]parley.MemoryFact, error) {
	if err := d.visitorExists(ctx, tenantID, visitorID); err != nil {
		return nil, err
	}
	rows, _ := d.pool.Query(ctx, `SELECT key, value, updated_at FROM memory_facts WHERE tenant_id = $1 AND visitor_id = $2 ORDER BY key`, tenantID, visitorID)
	facts, err := pgx.CollectRows(rows, pgx.RowToStructByName[parley.MemoryFact])
	if err != nil {
		return nil, fmt.Errorf("listing memory: %w", err)
	}
	return facts, nil
}

// Memory returns one fact.
func (d *Visitors) Memory(ctx context.Context, tenantID, visitorID, key string) (parley.MemoryFact, error) {
	if err := d.visitorExists(ctx, tenantID, visitorID); err != nil {
		return parley.MemoryFact{}, err
	}
	rows, _ := d.pool.Query(ctx, `SELECT key, value, updated_at FROM memory_facts WHERE tenant_id = $1 AND visitor_id = $2 AND key = $3`, tenantID, visitorID, key)
	f, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.MemoryFact])
	if err != nil {
		return parley.MemoryFact{}, pgbase.NotFound(err, "Memory fact")
	}
	return f, nil
}

// maxFactsPerVisitor bounds the facts one visitor accumulates (they all go into the prompt).
const maxFactsPerVisitor = 100

// UpsertMemory stores a fact by key, replacing its value.
func (d *Visitors) UpsertMemory(ctx context.Context, tenantID, visitorID, key, value string) (parley.MemoryFact, error) {
	if err := d.visitorExists(ctx, tenantID, visitorID); err != nil {
		return parley.MemoryFact{}, err
	}
	var f parley.MemoryFact
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM visitors WHERE id = $1 FOR UPDATE`, visitorID); err != nil {
			return fmt.Errorf("locking visitor: %w", err)
		}
		var n int
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT count(*), bool_or(key = $2) IS TRUE FROM memory_facts WHERE visitor_id = $1`, visitorID, key).Scan(&n, &exists); err != nil {
			return fmt.Errorf("counting memory: %w", err)
		}
		if !exists && n >= maxFactsPerVisitor {
			return &parley.Error{Kind: parley.KindConflict, Message: fmt.Sprintf("This visitor already has %d facts, the most kept: delete some first", maxFactsPerVisitor)}
		}
		rows, _ := tx.Query(ctx, `INSERT INTO memory_facts (tenant_id, visitor_id, key, value) VALUES ($1, $2, $3, $4)
			ON CONFLICT (visitor_id, key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()
			RETURNING key, value, updated_at`, tenantID, visitorID, key, value)
		var err error
		f, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.MemoryFact])
		if err != nil {
			return fmt.Errorf("storing memory: %w", err)
		}
		return nil
	})
	return f, err
}

// DeleteMemory forgets one fact.
func (d *Visitors) DeleteMemory(ctx context.Context, tenantID, visitorID, key string) error {
	if err := d.visitorExists(ctx, tenantID, visitorID); err != nil {
		return err
	}
	tag, err := d.pool.Exec(ctx, `DELETE FROM memory_facts WHERE tenant_id = $1 AND visitor_id = $2 AND key = $3`, tenantID, visitorID, key)
	if err != nil {
		return fmt.Errorf("deleting memory: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return parley.Errorf(parley.KindNotFound, "Memory fact not found")
	}
	return nil
}

// FindVisitor returns the tenant's visitor named by ref: its id, else its
// externalId (both indexed); KindNotFound when it names none. It never
// creates one.
func (d *Visitors) FindVisitor(ctx context.Context, tenantID, ref string) (parley.Visitor, error) {
	if ref == "" || !pgbase.Storable(ref) {
		return parley.Visitor{}, parley.Errorf(parley.KindNotFound, "Visitor not found")
	}
	var id *string // compared as a uuid, so that the primary key serves
	if pgbase.LooksLikeUUID(ref) {
		id = &ref
	}
	rows, _ := d.pool.Query(ctx, `SELECT `+visitorColumns+` FROM visitors
		WHERE tenant_id = $1 AND (id = $2::uuid OR external_id = $3)
		ORDER BY (id = $2::uuid) IS TRUE DESC LIMIT 1`, tenantID, id, ref)
	v, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Visitor])
	if err != nil {
		return parley.Visitor{}, pgbase.NotFound(err, "Visitor")
	}
	return v, nil
}

// ResolveChatVisitor finds the visitor a chat message names, by id first,
// then by externalId; a value that names neither creates a visitor with it
// as externalId, so that a site can key visitors by its own user ids without
// registering them first. The visitor is never Anonymous, even an anonymous
// visitor's row named by its id: only the anonymous id itself
// (ResolveAnonymousVisitor) counts as the browser that talked before.
func (d *Visitors) ResolveChatVisitor(ctx context.Context, tenantID, ref string) (parley.Visitor, error) {
	if ref == "" || !pgbase.Storable(ref) || len(ref) > 255 {
		return parley.Visitor{}, &parley.Error{Kind: parley.KindInvalid, Message: "visitorId must be 1 to 255 characters",
			Details: parley.FieldErrors{"visitorId": "must be 1 to 255 characters"}}
	}
	find := func() (parley.Visitor, error) {
		v, err := d.FindVisitor(ctx, tenantID, ref)
		v.Anonymous = false
		return v, err
	}
	v, err := find()
	if parley.ErrorKind(err) != parley.KindNotFound {
		return v, err
	}
	// A concurrent first message may create the same visitor: the unique
	// index decides, and the loser reads the winner's row.
	if _, err := d.pool.Exec(ctx, `INSERT INTO visitors (tenant_id, external_id) VALUES ($1, $2)
		ON CONFLICT (tenant_id, external_id) WHERE external_id IS NOT NULL DO NOTHING`, tenantID, ref); err != nil {
		return parley.Visitor{}, fmt.Errorf("creating chat visitor: %w", err)
	}
	return find()
}
