package manage

import (
	"context"
	"strings"

	"github.com/parley/parley"
	"github.com/parley/parley/db/knowledge"
)

// CorrectionInput is an owner's "Improve this answer" as a surface reads
// it: Answer the right answer (required, at most a corpus entry's content
// limit), Title the entry's title (optional: the visitor's question).
// Problems holds what the surface could not read of it, first.
type CorrectionInput struct {
	Answer   parley.Opt[string]
	Title    parley.Opt[string]
	Problems parley.FieldErrors
}

// Check normalises in (the title trimmed, an empty one left to the
// question) and returns its problems.
func (in *CorrectionInput) Check() parley.FieldErrors {
	errs := in.Problems.Copy()
	parley.CheckText(errs, "answer", in.Answer, parley.MaxCorpusContent, true)
	parley.NullIfEmpty(&in.Title)
	in.Title.Value = strings.TrimSpace(in.Title.Value)
	parley.CheckLen(errs, "title", in.Title, parley.MaxCorpusTitle)
	return errs
}

// CorrectAnswer makes the owner's right answer to answer messageID of the
// tenant's conversation a knowledge-base entry titled with the visitor's
// question, or updates the entry made from the same question before
// (knowledge.CorrectAnswer): the next time the question is asked, the
// entry ranks first and can be cited. A bad input is a 400 naming its
// field; another tenant's conversation or message a 404; a message that is
// not an answer of the assistant to a question a 400 naming messageId; a
// new entry beyond the plan's corpus limit a 429.
func (s *Service) CorrectAnswer(ctx context.Context, t parley.Tenant, conversationID, messageID string, in CorrectionInput) (knowledge.Corrected, error) {
	if err := in.Check().Err(); err != nil {
		return knowledge.Corrected{}, err
	}
	return s.DB.CorrectAnswer(ctx, t.ID, t.PlanInfo().CorpusLimit, knowledge.Correction{ConversationID: conversationID,
		MessageID: messageID, Title: in.Title.Value, Content: in.Answer.Value})
}

// AnsweredQuestion reads the question an answer of the tenant's
// conversation replied to, and the entry already made from it, for the
// correction form (knowledge.AnsweredQuestion's errors).
func (s *Service) AnsweredQuestion(ctx context.Context, tenantID, conversationID, messageID string) (knowledge.CorrectionQuestion, error) {
	return s.DB.AnsweredQuestion(ctx, tenantID, conversationID, messageID)
}
