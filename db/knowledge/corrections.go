package knowledge

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// Corrections (issue 40): an owner's right answer to a question a
// conversation's assistant answered becomes a knowledge-base entry, titled
// with the question, and the corrections table links the entry to it.

// CorrectionSource is the source of an entry a correction creates, so that
// the knowledge base tells it apart.
const CorrectionSource = "correction"

// Correction is an owner's right answer to one of a conversation's
// answers: Content the answer, Title the entry's title ("": the question).
// Both are checked (manage.CorrectAnswer).
type Correction struct {
	ConversationID string
	MessageID      string
	Title          string
	Content        string
}

// Corrected is what CorrectAnswer did: the entry, whether it was created
// (else an entry made from the same question was updated) and the
// question as the visitor asked it.
type Corrected struct {
	Entry    parley.CorpusEntry
	Created  bool
	Question string
}

// CorrectionQuestion is the visitor's question an answer replied to.
type CorrectionQuestion struct {
	MessageID string
	Text      string
	// Answer is the text of the answer corrected.
	Answer string
	// EntryID is the entry already made from this question, "" for none.
	EntryID string
}

// QuestionKey folds a question for the "same question" test: lower case,
// spaces collapsed, the punctuation at its ends dropped, so that "Do you
// deliver?" and "do you  deliver" are one question.
func QuestionKey(q string) string {
	return strings.Trim(strings.Join(strings.Fields(strings.ToLower(q)), " "), " ?!.,;:")
}

// QuestionTitle is the title of the entry made from question q: its words
// on one line, clipped to the corpus title's limit.
func QuestionTitle(q string) string {
	return parley.Clip(strings.Join(strings.Fields(q), " "), parley.MaxCorpusTitle)
}

// notAnswer is the 400 of a message that is not one of the assistant's
// answers to a question.
func notAnswer(why string) error {
	return &parley.Error{Kind: parley.KindInvalid, Message: "Only an answer of the assistant to a visitor's question can be improved: " + why,
		Details: map[string]string{"messageId": why}}
}

// AnsweredQuestion reads the visitor's question that answer messageID of
// the tenant's conversation replied to (the visitor's last message before
// it), and the entry already made from it. Another tenant's conversation
// or message, or one of another conversation, is NotFound; a message that
// is not the assistant's, or an answer with no question before it, is
// Invalid.
func (d *Knowledge) AnsweredQuestion(ctx context.Context, tenantID, conversationID, messageID string) (CorrectionQuestion, error) {
	return answeredQuestion(ctx, d.pool, tenantID, conversationID, messageID)
}

func answeredQuestion(ctx context.Context, q pgbase.Querier, tenantID, conversationID, messageID string) (CorrectionQuestion, error) {
	if !pgbase.LooksLikeUUID(conversationID) || !pgbase.LooksLikeUUID(messageID) {
		return CorrectionQuestion{}, parley.Errorf(parley.KindNotFound, "Message not found")
	}
	var role, answer string
	var qid, text *string
	err := q.QueryRow(ctx, `SELECT m.role, m.content, u.id, u.content
		FROM messages m
		LEFT JOIN LATERAL (SELECT id, content FROM messages p
			WHERE p.tenant_id = m.tenant_id AND p.conversation_id = m.conversation_id AND p.role = 'user' AND p.seq < m.seq
			ORDER BY p.seq DESC LIMIT 1) u ON true
		WHERE m.tenant_id = $1 AND m.conversation_id = $2 AND m.id = $3`,
		tenantID, conversationID, messageID).Scan(&role, &answer, &qid, &text)
	if errors.Is(err, pgx.ErrNoRows) {
		return CorrectionQuestion{}, parley.Errorf(parley.KindNotFound, "Message not found")
	}
	if err != nil {
		return CorrectionQuestion{}, fmt.Errorf("reading the answer: %w", err)
	}
	if role != "assistant" {
		return CorrectionQuestion{}, notAnswer("this message is not an answer of the assistant")
	}
	if text == nil || QuestionKey(*text) == "" {
		return CorrectionQuestion{}, notAnswer("no question of the visitor comes before this answer")
	}
	cq := CorrectionQuestion{MessageID: *qid, Text: *text, Answer: answer}
	// The key is known once the question is: a second read, by the index.
	err = q.QueryRow(ctx, `SELECT entry_id FROM corrections WHERE tenant_id = $1 AND md5(question_key) = md5($2) AND question_key = $2`,
		tenantID, QuestionKey(cq.Text)).Scan(&cq.EntryID)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return CorrectionQuestion{}, fmt.Errorf("finding the question's entry: %w", err)
	}
	return cq, nil
}

// CorrectAnswer makes c's answer the knowledge base's answer to the
// question the corrected message replied to: it updates the entry already
// made from that question (the same words, folded by QuestionKey), its
// title and content, and turns it on; else it creates one within the plan's
// corpus limit (source CorrectionSource), and links it to the
// question. One transaction under the tenant's lock, so that two
// corrections of one question at once make one entry.
func (d *Knowledge) CorrectAnswer(ctx context.Context, tenantID string, limit int, c Correction) (Corrected, error) {
	var out Corrected
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if err := pgbase.LockTenant(ctx, tx, tenantID); err != nil {
			return fmt.Errorf("locking tenant: %w", err)
		}
		q, err := answeredQuestion(ctx, tx, tenantID, c.ConversationID, c.MessageID)
		if err != nil {
			return err
		}
		out.Question = q.Text
		title := c.Title
		if title == "" {
			title = QuestionTitle(q.Text)
		}
		w := CorpusWrite{Title: parley.Some(title), Content: parley.Some(c.Content), IsActive: parley.Some(true)}
		if q.EntryID != "" {
			if out.Entry, err = updateCorpus(ctx, tx, tenantID, q.EntryID, w); err != nil {
				return err
			}
			_, err = tx.Exec(ctx, `UPDATE corrections SET question = $3, question_message_id = $4, answer_message_id = $5,
				conversation_id = $6, updated_at = now() WHERE tenant_id = $1 AND entry_id = $2`,
				tenantID, q.EntryID, q.Text, q.MessageID, c.MessageID, c.ConversationID)
			if err != nil {
				return fmt.Errorf("updating the correction: %w", err)
			}
		} else {
			// The default priority: the title, the question itself, ranks the
			// entry first for it; a higher one made corrections outrank the
			// right entries of other questions (BENCHMARKS.md).
			w.Source = parley.Some(CorrectionSource)
			if out.Entry, _, err = upsertCorpus(ctx, tx, tenantID, limit, w); err != nil {
				return err
			}
			out.Created = true
			_, err = tx.Exec(ctx, `INSERT INTO corrections (entry_id, tenant_id, question, question_key, question_message_id,
				answer_message_id, conversation_id) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
				out.Entry.ID, tenantID, q.Text, QuestionKey(q.Text), q.MessageID, c.MessageID, c.ConversationID)
			if err != nil {
				return fmt.Errorf("recording the correction: %w", err)
			}
		}
		return d.enqueueEmbed(ctx, tx, tenantID)
	})
	return out, err
}
