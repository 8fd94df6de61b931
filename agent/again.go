package agent

import (
	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm"
)

// A message sent again with its idempotency key (TurnInput.IdempotencyKey)
// finds the message stored the first time (parley.SessionState.Keyed) and
// stores nothing. When that first turn ended, its answer is replayed;
// when it did not (the instance answering it died, or the client left
// before the model was called), the stored message is answered now, as if
// it had just arrived: the lease serialises the session's turns, so the
// first turn cannot still be running. The same key sent with another
// message is refused (ErrIdempotencyKeyReused), and nothing is stored.

// EventReplayed is emitted before EventReady when the turn replays the
// answer stored the first time its message was sent: the answer's writer
// says so (Idempotency-Replayed).
const EventReplayed llm.EventKind = -2

// ErrIdempotencyKeyReused refuses a message sent with the key of another
// message of its session: 422, nothing stored.
var ErrIdempotencyKeyReused = &parley.Error{Kind: parley.KindUnprocessable, Code: "IDEMPOTENCY_KEY_REUSED",
	Message: "This Idempotency-Key was sent with another message in this session; send a new key for a new message"}

// sameMessage reports whether the message sent is the one stored under
// its key, as the store keeps text (parley.StorableText).
func sameMessage(stored, sent string) bool {
	return stored == parley.StorableText(sent)
}

// replay is the output of a message sent again after its turn ended: the
// stored answer, emitted as the turn's text, with the conversation as it
// is now. Tool runs are not repeated, nor listed.
func replay(t *turn, k *parley.KeyedMessage, emit func(llm.Event)) *TurnOutput {
	emit(llm.Event{Kind: EventReplayed})
	emit(llm.Event{Kind: EventReady})
	out := &TurnOutput{ConversationID: t.conv.ID, MessageCount: t.conv.MessageCount, Status: t.conv.Status,
		Assignee: t.conv.Assignee, Replayed: true}
	if k.Reply != nil {
		out.MessageID, out.Result.Text = k.Reply.ID, k.Reply.Content
		emit(llm.Event{Kind: llm.EventText, Text: k.Reply.Content})
	}
	return out
}

// turnsBefore is the session's recent turns without the message sent again
// and what followed it, when a message is sent again (k not nil): the
// turn answers it as the last message, as when it first arrived.
func turnsBefore(turns []parley.Turn, k *parley.KeyedMessage) []parley.Turn {
	if k == nil {
		return turns
	}
	for i, tn := range turns {
		if !tn.Timestamp.Before(k.Message.CreatedAt) {
			return turns[:i]
		}
	}
	return turns
}
