package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// SegmentSummary is a list item: the segment without its system prompt, with counts.
type SegmentSummary struct {
	parley.Segment
	CorpusCount        int `db:"corpus_count"`
	ConversationsCount int `db:"conversations_count"`
}

const segmentColumns = `s.id, s.tenant_id, s.slug, s.name, s.system_prompt, s.welcome_message,
	s.conversation_starters, s.form_config, s.is_default, s.is_active, s.lead_tool_id, s.created_at, s.updated_at`

// ListSegments lists a tenant's segments, the default first, then by name.
func (d *DB) ListSegments(ctx context.Context, tenantID string) ([]SegmentSummary, error) {
	rows, _ := d.pool.Query(ctx, `SELECT `+segmentColumns+`,
		(SELECT count(*) FROM corpus_entries c WHERE c.segment_id = s.id) AS corpus_count,
		(SELECT count(*) FROM conversations v WHERE v.segment_id = s.id) AS conversations_count
		FROM segments s WHERE s.tenant_id = $1 ORDER BY s.is_default DESC, s.name, s.slug`, tenantID)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[SegmentSummary])
	if err != nil {
		return nil, fmt.Errorf("listing segments: %w", err)
	}
	return out, nil
}

// Segment returns one of the tenant's segments by id or, failing that, by slug.
func (d *DB) Segment(ctx context.Context, tenantID, idOrSlug string) (parley.Segment, error) {
	return segmentByRef(ctx, d.pool, tenantID, idOrSlug, false)
}

func segmentByRef(ctx context.Context, q pgbase.Querier, tenantID, ref string, forUpdate bool) (parley.Segment, error) {
	col := "s.slug"
	if pgbase.LooksLikeUUID(ref) {
		col = "s.id::text"
	}
	sql := `SELECT ` + segmentColumns + ` FROM segments s WHERE s.tenant_id = $1 AND ` + col + ` = $2`
	if forUpdate {
		sql += " FOR UPDATE"
	}
	rows, _ := q.Query(ctx, sql, tenantID, ref)
	s, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Segment])
	if err != nil {
		return parley.Segment{}, pgbase.NotFound(err, "Segment")
	}
	return s, nil
}

// DefaultSegment returns the tenant's default segment.
func (d *DB) DefaultSegment(ctx context.Context, tenantID string) (parley.Segment, error) {
	rows, _ := d.pool.Query(ctx, `SELECT `+segmentColumns+` FROM segments s WHERE s.tenant_id = $1 AND s.is_default`, tenantID)
	s, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Segment])
	if err != nil {
		return parley.Segment{}, pgbase.NotFound(err, "Default segment")
	}
	return s, nil
}

// SegmentWrite is a segment create or partial update. On create Slug may be
// empty (generated from the name); IsDefault true moves the default here.
type SegmentWrite struct {
	Slug                 parley.Opt[string]
	Name                 parley.Opt[string]
	SystemPrompt         parley.Opt[string]
	WelcomeMessage       parley.Opt[string]
	ConversationStarters parley.Opt[[]parley.Starter]
	FormConfig           parley.Opt[*parley.FormConfig]
	IsDefault            parley.Opt[bool]
	IsActive             parley.Opt[bool]
	// AskInChat, set by the dashboard only, keeps the segment's lead tool in
	// step with the form: true creates or updates it (active, with the
	// form's fields), false deactivates it (see syncLeadTool).
	AskInChat parley.Opt[bool]
}

// CreateSegment creates a segment within the plan's limit. A taken slug is a
// conflict when the caller chose it; a generated one gets a numeric suffix.
func (d *DB) CreateSegment(ctx context.Context, tenantID string, limit int, w SegmentWrite) (parley.Segment, error) {
	var s parley.Segment
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if err := pgbase.LockTenant(ctx, tx, tenantID); err != nil {
			return fmt.Errorf("locking tenant: %w", err)
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM segments WHERE tenant_id = $1`, tenantID).Scan(&n); err != nil {
			return fmt.Errorf("counting segments: %w", err)
		}
		if n >= limit {
			return &parley.Error{Kind: parley.KindRateLimited, Code: "LIMIT_REACHED",
				Message: fmt.Sprintf("Segment limit of the plan reached (%d of %d): upgrade the plan or delete a segment", n, limit),
				Details: map[string]int{"current": n, "limit": limit}}
		}
		slug := w.Slug.Value
		if !w.Slug.Set || w.Slug.Null || slug == "" {
			var err error
			if slug, err = freeSlug(ctx, tx, tenantID, Slugify(w.Name.Value)); err != nil {
				return err
			}
		}
		if w.IsDefault.Value {
			if _, err := tx.Exec(ctx, `UPDATE segments SET is_default = false, updated_at = now() WHERE tenant_id = $1 AND is_default`, tenantID); err != nil {
				return fmt.Errorf("moving default segment: %w", err)
			}
		}
		starters := w.ConversationStarters.Value
		if starters == nil {
			starters = []parley.Starter{}
		}
		isActive := true
		if w.IsActive.Set && !w.IsActive.Null {
			isActive = w.IsActive.Value
		}
		if w.IsDefault.Value && !isActive {
			return inactiveDefault()
		}
		rows, _ := tx.Query(ctx, `INSERT INTO segments AS s (tenant_id, slug, name, system_prompt, welcome_message,
			conversation_starters, form_config, is_default, is_active)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING `+segmentColumns,
			tenantID, slug, w.Name.Value, w.SystemPrompt.Value, w.WelcomeMessage.Ptr(), starters,
			w.FormConfig.Value, w.IsDefault.Value, isActive)
		var err error
		s, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Segment])
		if pgbase.IsUniqueViolation(err, "segments_tenant_id_slug_key") {
			return &parley.Error{Kind: parley.KindConflict, Message: fmt.Sprintf("A segment with slug %q already exists", slug),
				Details: map[string]string{"slug": "already used by another segment"}}
		}
		if err != nil {
			return fmt.Errorf("inserting segment: %w", err)
		}
		if w.AskInChat.Set {
			return syncLeadTool(ctx, tx, &s, w.AskInChat.Value)
		}
		return nil
	})
	return s, err
}

// freeSlug returns base, or base-2, base-3, ... whichever the tenant does not use yet.
func freeSlug(ctx context.Context, tx pgx.Tx, tenantID, base string) (string, error) {
	rows, _ := tx.Query(ctx, `SELECT slug FROM segments WHERE tenant_id = $1 AND (slug = $2 OR slug LIKE $3)`,
		tenantID, base, base+"-%")
	taken, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", fmt.Errorf("finding a free slug: %w", err)
	}
	used := map[string]bool{}
	for _, t := range taken {
		used[t] = true
	}
	slug := base
	for i := 2; used[slug]; i++ {
		suffix := "-" + strconv.Itoa(i)
		slug = strings.TrimRight(truncate(base, 100-len(suffix)), "-") + suffix
	}
	return slug, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// UpdateSegment applies a partial update. Making a segment the default takes
// the flag from the previous one in the same transaction; the default cannot
// be made non-default directly (another segment must take it).
func (d *DB) UpdateSegment(ctx context.Context, tenantID, ref string, w SegmentWrite) (parley.Segment, error) {
	var s parley.Segment
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if err := pgbase.LockTenant(ctx, tx, tenantID); err != nil {
			return fmt.Errorf("locking tenant: %w", err)
		}
		cur, err := segmentByRef(ctx, tx, tenantID, ref, true)
		if err != nil {
			return err
		}
		if w.IsDefault.Set && !w.IsDefault.Value && cur.IsDefault {
			return &parley.Error{Kind: parley.KindInvalid, Message: "The default segment stays default until another segment is made the default",
				Details: map[string]string{"isDefault": "set isDefault true on another segment instead"}}
		}
		if w.IsActive.Set && !w.IsActive.Value && (cur.IsDefault || w.IsDefault.Value) {
			return &parley.Error{Kind: parley.KindInvalid, Message: "The default segment cannot be deactivated",
				Details: map[string]string{"isActive": "the default segment must stay active"}}
		}
		if w.IsDefault.Value && !cur.IsActive && !(w.IsActive.Set && w.IsActive.Value) {
			return inactiveDefault()
		}
		if w.IsDefault.Value && !cur.IsDefault {
			if _, err := tx.Exec(ctx, `UPDATE segments SET is_default = false, updated_at = now() WHERE tenant_id = $1 AND is_default`, tenantID); err != nil {
				return fmt.Errorf("moving default segment: %w", err)
			}
		}
		var sets []pgbase.SetClause
		sets = pgbase.AddSet(sets, "slug", w.Slug)
		sets = pgbase.AddSet(sets, "name", w.Name)
		sets = pgbase.AddSet(sets, "system_prompt", w.SystemPrompt)
		sets = pgbase.AddSet(sets, "welcome_message", w.WelcomeMessage)
		if w.ConversationStarters.Set {
			st := w.ConversationStarters.Value
			if st == nil {
				st = []parley.Starter{}
			}
			sets = append(sets, pgbase.SetClause{Column: "conversation_starters", Value: st})
		}
		if w.FormConfig.Set {
			sets = append(sets, pgbase.SetClause{Column: "form_config", Value: w.FormConfig.Value})
		}
		sets = pgbase.AddSet(sets, "is_default", w.IsDefault)
		sets = pgbase.AddSet(sets, "is_active", w.IsActive)
		sql, args := pgbase.UpdateSQL("segments AS s", "s.id = $1 RETURNING "+segmentColumns, []any{cur.ID}, sets)
		rows, _ := tx.Query(ctx, sql, args...)
		s, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Segment])
		if pgbase.IsUniqueViolation(err, "segments_tenant_id_slug_key") {
			return &parley.Error{Kind: parley.KindConflict, Message: fmt.Sprintf("A segment with slug %q already exists", w.Slug.Value),
				Details: map[string]string{"slug": "already used by another segment"}}
		}
		if err != nil {
			return fmt.Errorf("updating segment: %w", err)
		}
		if w.AskInChat.Set {
			return syncLeadTool(ctx, tx, &s, w.AskInChat.Value)
		}
		return nil
	})
	return s, err
}

// leadToolName is the name of a segment's lead tool: "Lead capture: "
// and the segment's name, or its slug too when another tool has that name.
func leadToolName(ctx context.Context, tx pgx.Tx, s *parley.Segment) (string, error) {
	name := parley.Clip("Lead capture: "+strings.TrimSpace(s.Name), 100)
	var taken bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tools WHERE tenant_id = $1 AND name = $2 AND id IS DISTINCT FROM $3)`,
		s.TenantID, name, s.LeadToolID).Scan(&taken); err != nil {
		return "", fmt.Errorf("naming the lead tool: %w", err)
	}
	if taken {
		suffix := " (" + s.Slug + ")"
		name = parley.Clip("Lead capture: "+strings.TrimSpace(s.Name), 100-utf8.RuneCountInString(suffix)) + suffix
	}
	return name, nil
}

// syncLeadTool keeps s's lead tool in step with its form, in tx: asking,
// the tool (created when s has none) is active, bound to s, with the form's
// fields and confirmation message, and a description telling the assistant
// when to use it; not asking, the tool, if any, is deactivated (kept, so
// that its submissions still name it). Asking needs a field.
func syncLeadTool(ctx context.Context, tx pgx.Tx, s *parley.Segment, ask bool) error {
	if !ask {
		if s.LeadToolID != nil {
			if _, err := tx.Exec(ctx, `UPDATE tools SET is_active = false, updated_at = now() WHERE tenant_id = $1 AND id = $2`,
				s.TenantID, *s.LeadToolID); err != nil {
				return fmt.Errorf("deactivating the lead tool: %w", err)
			}
		}
		return nil
	}
	fc := s.FormConfig
	if fc == nil || len(fc.Fields) == 0 {
		return &parley.Error{Kind: parley.KindInvalid, Message: "Validation failed",
			Details: map[string]string{"formConfig": "add at least one field for the assistant to ask for"}}
	}
	config, err := json.Marshal(map[string]any{"fields": fc.Fields, "confirmationMessage": fc.ConfirmationMessage})
	if err != nil {
		return fmt.Errorf("encoding the lead tool: %w", err)
	}
	name, err := leadToolName(ctx, tx, s)
	if err != nil {
		return err
	}
	want := "when the visitor wants to be contacted"
	if intent := strings.TrimSpace(fc.Intent); intent != "" {
		want = "when the visitor wants to " + strings.TrimSuffix(intent, ".")
	}
	desc := "Collect the visitor's details " + want + ": ask for each field you do not know yet, " +
		"confirm them with the visitor, then submit them once."
	if s.LeadToolID != nil {
		tag, err := tx.Exec(ctx, `UPDATE tools SET name = $3, description = $4, type = 'SUBMIT_FORM', config = $5,
			segment_id = $6, is_active = true, updated_at = now() WHERE tenant_id = $1 AND id = $2`,
			s.TenantID, *s.LeadToolID, name, desc, config, s.ID)
		if err != nil {
			return fmt.Errorf("updating the lead tool: %w", err)
		}
		if tag.RowsAffected() == 1 {
			return nil
		}
	}
	var id string
	if err := tx.QueryRow(ctx, `INSERT INTO tools (tenant_id, segment_id, name, description, type, config)
		VALUES ($1, $2, $3, $4, 'SUBMIT_FORM', $5) RETURNING id`, s.TenantID, s.ID, name, desc, config).Scan(&id); err != nil {
		return fmt.Errorf("creating the lead tool: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE segments SET lead_tool_id = $2 WHERE id = $1`, s.ID, id); err != nil {
		return fmt.Errorf("linking the lead tool: %w", err)
	}
	s.LeadToolID = &id
	return nil
}

// inactiveDefault refuses a default segment that would not answer: chat
// falls back to the default, so it must stay active.
func inactiveDefault() error {
	return &parley.Error{Kind: parley.KindInvalid, Message: "The default segment must be active",
		Details: map[string]string{"isActive": "the default segment must stay active; activate it as well"}}
}

// SegmentDeletion reports what deleting a segment removed with it.
type SegmentDeletion struct {
	ID                   string
	CorpusEntriesDeleted int64
	ToolsDeleted         int64
}

// DeleteSegment deletes a non-default segment. A segment that still has
// corpus entries or tools bound to it is refused (409, with the counts)
// unless cascade is set, which deletes them in the same transaction; nothing
// is moved silently.
func (d *DB) DeleteSegment(ctx context.Context, tenantID, ref string, cascade bool) (SegmentDeletion, error) {
	var del SegmentDeletion
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if err := pgbase.LockTenant(ctx, tx, tenantID); err != nil {
			return fmt.Errorf("locking tenant: %w", err)
		}
		s, err := segmentByRef(ctx, tx, tenantID, ref, true)
		if err != nil {
			return err
		}
		if s.IsDefault {
			return parley.Errorf(parley.KindInvalid, "The default segment cannot be deleted: make another segment the default first")
		}
		var entries, tools int
		// The segment's own lead tool goes with it, whatever cascade says.
		var leadDeleted int64
		if s.LeadToolID != nil {
			tag, err := tx.Exec(ctx, `DELETE FROM tools WHERE tenant_id = $1 AND id = $2`, tenantID, *s.LeadToolID)
			if err != nil {
				return fmt.Errorf("deleting the lead tool: %w", err)
			}
			leadDeleted = tag.RowsAffected()
		}
		if err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM corpus_entries WHERE segment_id = $1),
			(SELECT count(*) FROM tools WHERE segment_id = $1)`, s.ID).Scan(&entries, &tools); err != nil {
			return fmt.Errorf("counting segment corpus and tools: %w", err)
		}
		if (entries > 0 || tools > 0) && !cascade {
			return &parley.Error{Kind: parley.KindConflict,
				Message: fmt.Sprintf("Segment %q still has %d corpus entries and %d tools: move them to another segment, or delete with ?cascade=true to delete them too", s.Slug, entries, tools),
				Details: map[string]int{"corpusEntries": entries, "tools": tools}}
		}
		tag, err := tx.Exec(ctx, `DELETE FROM corpus_entries WHERE tenant_id = $1 AND segment_id = $2`, tenantID, s.ID)
		if err != nil {
			return fmt.Errorf("deleting segment corpus: %w", err)
		}
		del = SegmentDeletion{ID: s.ID, CorpusEntriesDeleted: tag.RowsAffected()}
		if tag, err = tx.Exec(ctx, `DELETE FROM tools WHERE tenant_id = $1 AND segment_id = $2`, tenantID, s.ID); err != nil {
			return fmt.Errorf("deleting segment tools: %w", err)
		}
		del.ToolsDeleted = tag.RowsAffected() + leadDeleted
		if _, err := tx.Exec(ctx, `DELETE FROM segments WHERE tenant_id = $1 AND id = $2`, tenantID, s.ID); err != nil {
			return fmt.Errorf("deleting segment: %w", err)
		}
		return nil
	})
	return del, err
}

// TenantAndSegment reads the tenant of slug with one of its segments in one
// round trip, as TenantBySlug and then Segment (ref an id or a slug) or,
// for an empty ref, DefaultSegment: what every chat message looks up first.
// The segment is nil when the tenant has none matching ref; an unknown
// tenant is not found.
func (d *DB) TenantAndSegment(ctx context.Context, slug, ref string) (parley.Tenant, *parley.Segment, error) {
	if !pgbase.Storable(slug) {
		return parley.Tenant{}, nil, parley.Errorf(parley.KindNotFound, "Tenant not found")
	}
	batch := &pgx.Batch{}
	batch.Queue(`SELECT `+tenantColumns+` FROM tenants WHERE slug = $1`, slug)
	segSQL := `SELECT ` + segmentColumns + ` FROM segments s JOIN tenants t ON t.id = s.tenant_id WHERE t.slug = $1 AND `
	switch {
	case ref == "":
		batch.Queue(segSQL+`s.is_default`, slug)
	case !pgbase.Storable(ref):
	case pgbase.LooksLikeUUID(ref):
		batch.Queue(segSQL+`s.id::text = $2`, slug, ref)
	default:
		batch.Queue(segSQL+`s.slug = $2`, slug, ref)
	}
	br := d.pool.SendBatch(ctx, batch)
	defer br.Close()
	rows, _ := br.Query()
	t, err := pgx.CollectExactlyOneRow(rows, scanTenant)
	if err != nil {
		return parley.Tenant{}, nil, pgbase.NotFound(err, "Tenant")
	}
	if batch.Len() == 1 {
		return t, nil, br.Close()
	}
	rows, _ = br.Query()
	s, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Segment])
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return t, nil, br.Close()
	case err != nil:
		return parley.Tenant{}, nil, fmt.Errorf("reading the segment: %w", err)
	}
	return t, &s, br.Close()
}
