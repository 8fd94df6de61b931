package db_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/db/dbtest"
)

// openTurns opens a first message of each session (its lease held by
// "h-"+session) and returns the conversations' ids.
func openTurns(t *testing.T, f *dbtest.ConvFixture, test bool, sessions ...string) []string {
	t.Helper()
	ids := make([]string, len(sessions))
	for i, s := range sessions {
		p := parley.ConversationStart{TenantID: f.Tenant.ID, SessionID: s, Limit: 1000, Channel: parley.ChannelWeb, Test: test}
		ok, st, err := f.Store.OpenTurn(context.Background(), p, "What does the premium plan cost a month?", "h-"+s, "", 2*time.Minute, 3)
		if err != nil || !ok || st.Opened == nil {
			t.Fatalf("opening %s: %v %v %+v", s, err, ok, st)
		}
		ids[i] = st.Opened.Conversation.ID
	}
	return ids
}

// storedReply is what the database holds of a conversation's answer.
type storedReply struct {
	count, leases      int
	answered           bool
	knowledge, key     *string
	signals            int
	content, messageID string
}

func readReply(t *testing.T, f *dbtest.ConvFixture, conv, session string) storedReply {
	t.Helper()
	var r storedReply
	err := f.Store.Pool().QueryRow(context.Background(), `SELECT c.message_count, c.answered,
			(SELECT count(*) FROM session_leases l WHERE l.tenant_id = c.tenant_id AND l.session_id = $2),
			m.knowledge::text, m.question_key, m.gap_signals, m.content, m.id
		FROM conversations c JOIN messages m ON m.conversation_id = c.id AND m.role = 'assistant'
		WHERE c.id = $1`, conv, session).Scan(&r.count, &r.answered, &r.leases, &r.knowledge, &r.key, &r.signals, &r.content, &r.messageID)
	if err != nil {
		t.Fatalf("reading the reply of %s: %v", conv, err)
	}
	return r
}

// Replies written together are stored as each written alone would be: the
// message with its knowledge, signs and question key (none for a test
// conversation), the conversation counted and answered, the lease given
// back; each caller gets its own message back.
func TestSaveRepliesTogether(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupConversations(t)
	live := openTurns(t, f, false, "ra", "rb")
	test := openTurns(t, f, true, "rc")
	convs, sessions := append(live, test...), []string{"ra", "rb", "rc"}
	refs := []parley.KnowledgeRef{{ID: "00000000-0000-4000-8000-000000000001", Title: "Pricing"}}
	recs := make([]parley.TurnRecord, 3)
	for i := range recs {
		recs[i] = parley.TurnRecord{TenantID: f.Tenant.ID, ConversationID: convs[i], SessionID: sessions[i],
			LeaseHolder: "h-" + sessions[i], Reply: fmt.Sprintf("Answer %d", i), GapSignals: i,
			QuestionKey: "premium plan cost month"}
	}
	recs[0].Knowledge = refs
	if err := f.Store.SaveRepliesTogether(ctx, recs); err != nil {
		t.Fatalf("one statement: %v", err)
	}
	for i, conv := range convs {
		r := readReply(t, f, conv, sessions[i])
		if r.count != 2 || !r.answered || r.leases != 0 || r.content != fmt.Sprintf("Answer %d", i) || r.signals != i {
			t.Errorf("reply %d stored as %+v", i, r)
		}
		switch {
		case i == 2 && r.key != nil:
			t.Errorf("a test conversation's answer has question key %q", *r.key)
		case i < 2 && (r.key == nil || *r.key != "premium plan cost month"):
			t.Errorf("reply %d: question key %v", i, r.key)
		}
		if (i == 0) != (r.knowledge != nil) {
			t.Errorf("reply %d: knowledge %v", i, r.knowledge)
		}
	}
	var got []parley.KnowledgeRef
	if r := readReply(t, f, convs[0], "ra"); r.knowledge == nil || json.Unmarshal([]byte(*r.knowledge), &got) != nil ||
		len(got) != 1 || got[0] != refs[0] {
		t.Errorf("knowledge stored as %v", r.knowledge)
	}

	// Through SaveReplies, each gets its own message; a conversation gone
	// gets "not found", the others are stored all the same.
	more := openTurns(t, f, false, "rd", "re")
	gone := "00000000-0000-4000-8000-00000000dead"
	recs = []parley.TurnRecord{
		{TenantID: f.Tenant.ID, ConversationID: more[0], SessionID: "rd", LeaseHolder: "h-rd", Reply: "To rd"},
		{TenantID: f.Tenant.ID, ConversationID: gone, SessionID: "rx", LeaseHolder: "h-rx", Reply: "To nobody"},
		{TenantID: f.Tenant.ID, ConversationID: more[1], SessionID: "re", LeaseHolder: "h-re", Reply: "To re"},
	}
	ms, errs := f.Store.SaveReplies(ctx, recs)
	if errs[0] != nil || errs[2] != nil || parley.ErrorKind(errs[1]) != parley.KindNotFound {
		t.Fatalf("errors %v, want only the second not found", errs)
	}
	for _, i := range []int{0, 2} {
		if ms[i].ConversationID != recs[i].ConversationID || ms[i].Content != recs[i].Reply || ms[i].Role != "assistant" ||
			ms[i].ID == "" || ms[i].CreatedAt.IsZero() {
			t.Errorf("reply %d came back as %+v", i, ms[i])
		}
		if r := readReply(t, f, recs[i].ConversationID, recs[i].SessionID); r.messageID != ms[i].ID || r.leases != 0 {
			t.Errorf("reply %d: stored %+v, returned %s", i, r, ms[i].ID)
		}
	}
	// Another tenant's conversation is not found, as written alone.
	other := openTurns(t, &dbtest.ConvFixture{Store: f.Store, Tenant: f.Other}, false, "rf")
	_, errs = f.Store.SaveReplies(ctx, []parley.TurnRecord{
		{TenantID: f.Tenant.ID, ConversationID: other[0], SessionID: "rf", LeaseHolder: "h-rf", Reply: "Wrong tenant"},
		{TenantID: f.Tenant.ID, ConversationID: gone, SessionID: "ry", LeaseHolder: "h-ry", Reply: "To nobody"},
	})
	if parley.ErrorKind(errs[0]) != parley.KindNotFound || parley.ErrorKind(errs[1]) != parley.KindNotFound {
		t.Fatalf("another tenant's conversation: %v", errs)
	}
	var n int
	if err := f.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM messages WHERE conversation_id = $1 AND role = 'assistant'`,
		other[0]).Scan(&n); err != nil || n != 0 {
		t.Fatalf("another tenant's conversation got %d answers (%v)", n, err)
	}
}

// A batch PostgreSQL refuses writes nothing, and each reply is written
// again on its own: the good ones are stored, the bad one gets its error.
// Two replies of one conversation are refused before the statement.
func TestSaveRepliesFallBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupConversations(t)
	convs := openTurns(t, f, false, "fa", "fb")
	recs := []parley.TurnRecord{
		{TenantID: f.Tenant.ID, ConversationID: convs[0], SessionID: "fa", LeaseHolder: "h-fa", Reply: "To fa"},
		{TenantID: "not-a-uuid", ConversationID: convs[1], SessionID: "fb", LeaseHolder: "h-fb", Reply: "Refused"},
	}
	if err := f.Store.SaveRepliesTogether(ctx, recs); err == nil {
		t.Fatal("a batch with a tenant id that is no UUID was written")
	}
	ms, errs := f.Store.SaveReplies(ctx, recs)
	if errs[0] != nil || ms[0].Content != "To fa" || errs[1] == nil {
		t.Fatalf("after the fallback: %+v %v", ms, errs)
	}
	if r := readReply(t, f, convs[0], "fa"); r.count != 2 || r.leases != 0 {
		t.Fatalf("the good reply stored as %+v", r)
	}
	twice := []parley.TurnRecord{
		{TenantID: f.Tenant.ID, ConversationID: convs[1], SessionID: "fb", LeaseHolder: "h-fb", Reply: "One"},
		{TenantID: f.Tenant.ID, ConversationID: convs[1], SessionID: "fb", LeaseHolder: "h-fb", Reply: "Two"},
	}
	if err := f.Store.SaveRepliesTogether(ctx, twice); err == nil {
		t.Fatal("two replies of one conversation went into one statement")
	}
	if _, errs := f.Store.SaveReplies(ctx, twice); errs[0] != nil || errs[1] != nil {
		t.Fatalf("two replies of one conversation, written one by one: %v", errs)
	}
}

// Turns finishing at once through SaveTurn each get their own reply stored
// and returned, however the replies were batched.
func TestSaveTurnConcurrentReplies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := dbtest.SetupConversations(t)
	const n = 24
	sessions := make([]string, n)
	for i := range sessions {
		sessions[i] = fmt.Sprintf("cc%d", i)
	}
	convs := openTurns(t, f, false, sessions...)
	var wg sync.WaitGroup
	ms, errs := make([]parley.Message, n), make([]error, n)
	for i := range n {
		wg.Go(func() {
			ms[i], errs[i] = f.Store.SaveTurn(ctx, parley.TurnRecord{TenantID: f.Tenant.ID, ConversationID: convs[i],
				SessionID: sessions[i], LeaseHolder: "h-" + sessions[i], Reply: "Answer to " + sessions[i]})
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || ms[i].ConversationID != convs[i] || ms[i].Content != "Answer to "+sessions[i] {
			t.Fatalf("turn %d: %+v %v", i, ms[i], errs[i])
		}
		if r := readReply(t, f, convs[i], sessions[i]); r.messageID != ms[i].ID || r.count != 2 || r.leases != 0 {
			t.Fatalf("turn %d stored as %+v", i, r)
		}
	}
}
