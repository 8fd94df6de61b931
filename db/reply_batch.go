package db

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// The replies of concurrent turns (saveReply, a reply with a lease to give
// back) are written in one statement (saveRepliesSQL), gathered by a
// writeQueue (DB.replies): a reply alone is written at once, by the
// statement it had before; those that come while a write is under way are
// written together when it ends. One statement for many replies costs
// PostgreSQL about half the CPU a reply of writing each in its own
// (BENCHMARKS.md, issue 41: 0.15–0.17 ms against 0.30–0.44 ms a reply, the
// conversation's update and the message's insert, ten at a time).

// pendingReply is one turn's reply waiting in DB.replies.
type pendingReply struct {
	r   parley.TurnRecord
	m   parley.Message
	err error
}

func (p *pendingReply) fail(err error) {
	if p.m.ID == "" && p.err == nil {
		p.err = err
	}
}

// saveReplyWith writes r's reply and gives its lease back through q, with
// the replies of the turns queued beside it (write, DB.writeReplies, sets
// each one's message or error), and returns the stored message.
func saveReplyWith(ctx context.Context, q *writeQueue[*pendingReply], r parley.TurnRecord, write func(context.Context, []*pendingReply)) (parley.Message, error) {
	p := &pendingReply{r: r}
	q.run(ctx, p, write)
	return p.m, p.err
}

// writeReplies writes the replies of batch, setting each one's message or
// error: one reply with saveReplySQL, several with saveRepliesSQL. Should
// PostgreSQL refuse that statement (a deadlock with a writer of two of the
// same conversations, a value it rejects), it wrote nothing, and each reply
// is written again on its own, so that each gets its own answer. When what
// became of it is unknown (the connection failed, the time ran out, its
// answer could not be read), none is written again, which could store a
// reply twice: each gets the error, as a reply written alone would.
func (d *DB) writeReplies(ctx context.Context, batch []*pendingReply) {
	if len(batch) > 1 {
		err := d.writeRepliesTogether(ctx, batch)
		if err == nil {
			return
		}
		if !writtenNothing(err) {
			for _, p := range batch {
				p.err = fmt.Errorf("storing the reply: %w", err)
			}
			return
		}
	}
	for _, p := range batch {
		p.m, p.err = d.saveReplyAlone(ctx, p.r)
	}
}

// writtenNothing says whether a batch that failed with err surely wrote
// nothing: refused before it was sent, or by PostgreSQL.
func writtenNothing(err error) bool { return errors.Is(err, errNotSent) || isPgError(err) }

// errNotSent is the refusal of a batch before its statement is sent
// (writeRepliesTogether, writeOpensTogether).
var errNotSent = errors.New("the batch was not sent")

// writeRepliesTogether writes batch's replies in one statement. Each turn
// holds its session's lease, so no two of them are of one conversation;
// a batch that would be (a caller's mistake) is refused, to be written
// reply by reply.
func (d *DB) writeRepliesTogether(ctx context.Context, batch []*pendingReply) error {
	n := len(batch)
	var (
		tenants, convs, contents, keys, sessions, holders = make([]string, n), make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]string, n)
		knowledge = make([]any, n)
		signals   = make([]int16, n)
		of        = make(map[string]*pendingReply, n)
	)
	for i, p := range batch {
		r := p.r
		if of[r.ConversationID] != nil {
			return fmt.Errorf("%w: two replies of conversation %s", errNotSent, r.ConversationID)
		}
		of[r.ConversationID] = p
		tenants[i], convs[i], contents[i] = r.TenantID, r.ConversationID, pgbase.StorableKey(r.Reply)
		keys[i], sessions[i], holders[i] = questionKeyArg(r.QuestionKey), pgbase.StorableKey(r.SessionID), r.LeaseHolder
		signals[i], knowledge[i] = int16(r.GapSignals), knowledgeArg(r.Knowledge)
	}
	rows, _ := d.pool.Query(ctx, saveRepliesSQL, tenants, convs, contents, knowledge, signals, keys, sessions, holders)
	ms, err := pgx.CollectRows(rows, pgx.RowToStructByName[parley.Message])
	if err != nil {
		return err
	}
	for _, m := range ms {
		if p := of[m.ConversationID]; p != nil {
			p.m = m
		}
	}
	for _, p := range batch {
		if p.m.ID == "" {
			// Its conversation is gone (deleted meanwhile), as saveReply
			// answers it; its lease was given back all the same.
			p.err = parley.Errorf(parley.KindNotFound, "Conversation not found")
		}
	}
	return nil
}

// saveRepliesSQL is saveReplySQL for many replies at once, one a row of its
// arrays: tenant $1, conversation $2, content $3, knowledge $4 (NULL for
// none), gap signals $5, question key $6, session $7 (as the lease
// stores it) and lease holder $8. An answer's update of its conversation is
// appendMessageCTE's for the role assistant (answered; the visitor's marks
// untouched). One row a reply stored: none for a conversation not found.
const saveRepliesSQL = `WITH input AS (
		SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::jsonb[], $5::smallint[], $6::text[], $7::text[], $8::text[])
			AS i(tenant_id, conversation_id, content, knowledge, gap_signals, question_key, session_id, holder)),
	released AS (
		DELETE FROM session_leases l USING input i
		WHERE l.tenant_id = i.tenant_id AND l.session_id = i.session_id AND l.holder = i.holder),
	c AS (
		UPDATE conversations SET message_count = message_count + 1, last_message_at = clock_timestamp(), updated_at = now(),
			answered = true
		FROM input i WHERE conversations.tenant_id = i.tenant_id AND conversations.id = i.conversation_id
		RETURNING conversations.id, conversations.tenant_id, conversations.is_test,
			i.content, i.knowledge, i.gap_signals, i.question_key)
	INSERT INTO messages (tenant_id, conversation_id, role, content, knowledge, gap_signals, question_key)
	SELECT tenant_id, id, 'assistant', content, knowledge, gap_signals, CASE WHEN NOT is_test THEN nullif(question_key, '') END FROM c
	RETURNING ` + pgbase.MessageColumns
