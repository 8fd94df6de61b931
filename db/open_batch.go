package db

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// pendingOpen is a visitor's message waiting in DB.opens to be stored
// (OpenTurn, when another turn's message is being written): its turn holds
// the session's lease already, and its state was read with it.
type pendingOpen struct {
	p       *parley.ConversationStart // validated
	content string                    // the message, storable
	holder  string                    // the lease's holder
	counted bool                      // the lease counted a new conversation

	opened *openedTurn // the message stored, nil when it was not
	err    error       // what became of it is unknown
}

func (o *pendingOpen) fail(err error) {
	if o.opened == nil && o.err == nil {
		o.err = err
	}
}

// writeOpens stores the messages of batch in one statement (openTurnsSQL),
// setting each one's opened when it was stored. A message not stored (the
// row by row decisions of openTurnSQL) is left to StartTurn, as OpenTurn
// leaves it; so is every message of a batch PostgreSQL refused (a value it
// rejects, a deadlock), or of one refused before it was sent (two messages
// of one session, which the lease rules out): it wrote nothing. When what
// became of it is unknown (the connection failed, the time ran out), each
// gets the error: StartTurn could store a message twice.
func (d *DB) writeOpens(ctx context.Context, batch []*pendingOpen) {
	if err := d.writeOpensTogether(ctx, batch); err != nil && !writtenNothing(err) {
		for _, o := range batch {
			o.err = err
		}
	}
}

// sessionOf keys a message of a batch: its tenant and session, which one
// conversation at most has.
type sessionOf struct{ tenant, session string }

// writeOpensTogether stores batch's messages in one statement.
func (d *DB) writeOpensTogether(ctx context.Context, batch []*pendingOpen) error {
	n := len(batch)
	var (
		tenants, sessions, channels, visitorTypes      = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		contents, leaseSessions, holders, keys         = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		segments, visitors, agentModels, pages, locals = make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n)
		metadata                                       = make([]parley.ConversationMetadata, n)
		tests, counted                                 = make([]bool, n), make([]bool, n)
		of                                             = make(map[sessionOf]*pendingOpen, n)
	)
	for i, o := range batch {
		p := o.p
		k := sessionOf{p.TenantID, p.SessionID}
		if of[k] != nil {
			return fmt.Errorf("%w: two messages of session %q", errNotSent, p.SessionID)
		}
		of[k] = o
		tenants[i], segments[i], visitors[i], sessions[i], channels[i] = p.TenantID, p.SegmentID, p.VisitorID, p.SessionID, p.Channel
		visitorTypes[i], agentModels[i], pages[i], locals[i], metadata[i] = p.VisitorType, p.AgentModel, p.PageURL, p.Locale, p.Metadata
		tests[i], contents[i], leaseSessions[i], holders[i] = p.Test, o.content, pgbase.StorableKey(p.SessionID), o.holder
		keys[i], counted[i] = p.IdempotencyKey, o.counted
	}
	rows, _ := d.pool.Query(ctx, openTurnsSQL, tenants, segments, visitors, sessions, channels, visitorTypes, agentModels,
		pages, locals, metadata, tests, contents, leaseSessions, holders, keys, counted)
	os, err := pgx.CollectRows(rows, pgx.RowToStructByName[openedTurn])
	if err != nil {
		return err
	}
	for i := range os {
		if o := of[sessionOf{os[i].TenantID, os[i].SessionID}]; o != nil {
			o.opened = &os[i]
		}
	}
	return nil
}

// openTurnsSQL is openTurnSQL for many messages at once, one a row of its
// arrays: tenant $1, segment $2, visitor $3, session $4, channel $5, visitor
// type $6, agent model $7, page $8, locale $9, metadata $10 and test $11 of
// the conversation to start should the session have none; the message
// $12; the session as the lease stores it $13, the lease's holder $14, the
// idempotency key $15 (empty for none), and whether the lease counted the
// new conversation $16 (openTurnSQL reads that from its connection's
// setting). Each message is decided as openTurnSQL decides it. One row a
// message stored.
var openTurnsSQL = `WITH input AS (
		SELECT i.*,
			(i.segment_id IS NULL OR EXISTS (SELECT 1 FROM segments s WHERE s.tenant_id = i.tenant_id AND s.id = i.segment_id))
			AND (i.visitor_id IS NULL OR EXISTS (SELECT 1 FROM visitors v WHERE v.tenant_id = i.tenant_id AND v.id = i.visitor_id)) AS ok,
			EXISTS (SELECT 1 FROM session_leases l WHERE l.tenant_id = i.tenant_id AND l.session_id = i.lease_session AND l.holder = i.holder)
			AND (i.idem = '' OR NOT EXISTS (SELECT 1 FROM conversations kc JOIN messages km ON km.conversation_id = kc.id
				WHERE kc.tenant_id = i.tenant_id AND kc.session_id = i.session_id AND km.idempotency_key = i.idem)) AS held
		FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
			$10::jsonb[], $11::boolean[], $12::text[], $13::text[], $14::text[], $15::text[], $16::boolean[])
			AS i(tenant_id, segment_id, visitor_id, session_id, channel, visitor_type, agent_model, page_url, locale,
				metadata, is_test, content, lease_session, holder, idem, counted)),
	appended AS (
		UPDATE conversations c SET message_count = c.message_count + 1, last_message_at = clock_timestamp(), updated_at = now(),
			first_user_message = coalesce(c.first_user_message, i.content),
			repeated_question = c.repeated_question OR question_repeated(c.id, i.content)
		FROM input i
		WHERE c.tenant_id = i.tenant_id AND c.session_id = i.session_id AND c.is_test = i.is_test AND i.held
		RETURNING ` + pgbase.Qualified("c", pgbase.ConversationColumns) + `),
	started AS (
		INSERT INTO conversations (tenant_id, segment_id, visitor_id, session_id, channel, visitor_type,
			agent_model, page_url, locale, metadata, is_test, message_count, first_user_message, last_message_at)
		SELECT i.tenant_id, i.segment_id, i.visitor_id, i.session_id, i.channel, i.visitor_type,
			i.agent_model, i.page_url, i.locale, i.metadata, i.is_test, 1, i.content, clock_timestamp()
		FROM input i
		WHERE i.ok AND i.held AND (i.is_test OR i.counted)
			AND NOT EXISTS (SELECT 1 FROM appended a WHERE a.tenant_id = i.tenant_id AND a.session_id = i.session_id)
		` + conversationOfTurnSQL + `
	msg AS (
		INSERT INTO messages (tenant_id, conversation_id, role, content, idempotency_key)
		SELECT conv.tenant_id, conv.id, 'user', i.content, nullif(i.idem, '')
		FROM conv JOIN input i ON i.tenant_id = conv.tenant_id AND i.session_id = conv.session_id
		RETURNING id, created_at, conversation_id)
	SELECT conv.*, msg.id AS message_id, msg.created_at AS message_created_at FROM conv JOIN msg ON msg.conversation_id = conv.id`
