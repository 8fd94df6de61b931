package agent

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/agent/tools/toolstest"
)

// memStore is an in-memory Store: the engine's tests run without Postgres
// (the web tests run it on *db.DB).
type memStore struct {
	mu         sync.Mutex
	holder     string // the session lease's holder, "" when free
	conv       *parley.Conversation
	turns      []parley.Turn
	tools      []parley.Tool
	saved      []parley.TurnRecord
	releases   int
	startErr   error
	saveErr    error
	corpus     []parley.CorpusEntry
	memory     []parley.MemoryFact
	remembered map[string]string
	starts     []parley.ConversationStart
	// opens has OpenTurn store the message (StartTurn is then not called);
	// leaseCalls counts OpenTurn's lease takings.
	opens      bool
	leaseCalls int
	// moves and announced are the state changes asked and the messages
	// announced as left to a person.
	moves     []string
	announced []string
}

// OpenTurn takes the lease and reads the state; with opens set it also
// stores the message, as db.OpenTurn does when nothing is out of the
// ordinary, else it leaves that to StartTurn.
func (m *memStore) OpenTurn(_ context.Context, p parley.ConversationStart, message, holder, _ string, _ time.Duration, _ int) (bool, parley.SessionState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.holder != "" {
		return false, parley.SessionState{}, nil
	}
	m.holder = holder
	m.leaseCalls++
	st := parley.SessionState{Turns: append([]parley.Turn(nil), m.turns...)}
	if m.conv != nil {
		c := *m.conv
		st.Conversation = &c
	}
	if m.opens {
		c, msg, created := m.store(p, message, st.Conversation)
		st.Opened = &parley.OpenedTurn{Conversation: c, Message: msg, Created: created}
	}
	return true, st, nil
}

// store stores a message as StartTurn does; m.mu is held.
func (m *memStore) store(p parley.ConversationStart, message string, known *parley.Conversation) (parley.Conversation, parley.Message, bool) {
	created := known == nil
	if created {
		m.conv = &parley.Conversation{ID: "conv-1", TenantID: p.TenantID, SessionID: p.SessionID, Channel: p.Channel, Status: parley.StatusBot}
	}
	m.conv.MessageCount++
	m.turns = append(m.turns, parley.Turn{Role: "user", Content: message})
	return *m.conv, parley.Message{ID: "msg-user", ConversationID: m.conv.ID, Role: "user", Content: message}, created
}

func (m *memStore) RenewSessionLease(_ context.Context, _, _, holder string, _ time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.holder == holder, nil
}

func (m *memStore) ReleaseSessionLease(_ context.Context, _, _, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.holder == holder {
		m.holder = ""
		m.releases++
	}
	return nil
}

func (m *memStore) StartTurn(_ context.Context, p parley.ConversationStart, message string, known *parley.Conversation) (parley.Conversation, parley.Message, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.starts = append(m.starts, p)
	if m.startErr != nil {
		return parley.Conversation{}, parley.Message{}, false, m.startErr
	}
	c, msg, created := m.store(p, message, known)
	return c, msg, created, nil
}

func (m *memStore) RecentTurns(context.Context, string, string, int) ([]parley.Turn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]parley.Turn(nil), m.turns...), nil
}

func (m *memStore) PromptData(_ context.Context, _, _, _, visitorID string, _ int) (parley.PromptData, error) {
	p := parley.PromptData{Corpus: m.corpus, Tools: m.tools}
	if visitorID != "" {
		p.Memory = m.memory
	}
	return p, nil
}

func (m *memStore) UpsertMemory(_ context.Context, _, _, key, value string) (parley.MemoryFact, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.remembered == nil {
		m.remembered = map[string]string{}
	}
	m.remembered[key] = value
	return parley.MemoryFact{Key: key, Value: value}, nil
}

func (m *memStore) SearchProducts(context.Context, string, string, int) ([]parley.Product, error) {
	return nil, nil
}

func (m *memStore) ExploreCorpus(context.Context, string, string, string, string, [][]string, int) ([]parley.CorpusEntry, error) {
	return nil, nil
}

func (m *memStore) CorpusVectors(context.Context, string, string, []string) ([]parley.CorpusVector, error) {
	return nil, nil
}

func (m *memStore) SaveTurn(_ context.Context, r parley.TurnRecord) (parley.Message, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.saveErr != nil {
		return parley.Message{}, m.saveErr
	}
	m.saved = append(m.saved, r)
	if r.LeaseHolder != "" && m.holder == r.LeaseHolder {
		m.holder = ""
	}
	if r.Reply == "" {
		return parley.Message{}, nil
	}
	m.turns = append(m.turns, parley.Turn{Role: "assistant", Content: r.Reply})
	m.conv.MessageCount++
	return parley.Message{ID: "msg-reply", Role: "assistant", Content: r.Reply}, nil
}

func (m *memStore) MoveConversation(_ context.Context, _, _, to string, _ parley.Holder) (parley.ConversationMove, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mv := parley.ConversationMove{From: m.conv.Status}
	m.conv.Status, m.conv.Assignee = to, nil
	m.moves = append(m.moves, to)
	mv.Conversation = *m.conv
	return mv, nil
}

func (m *memStore) AnnounceVisitorMessage(_ context.Context, _, _, messageID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.announced = append(m.announced, messageID)
	return nil
}

func testEngine(store Store, llm llm.Provider) *Engine {
	return &Engine{Store: store, LLM: llm, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		SessionWait: 200 * time.Millisecond}
}

func testInput(channel string) *TurnInput {
	return &TurnInput{
		Tenant:  parley.Tenant{ID: "tenant-1", Slug: "bikes", Plan: "scale"},
		Segment: parley.Segment{ID: "seg-1", Slug: "default"},
		Visitor: &parley.Visitor{ID: "visitor-1"}, SessionID: "s1", Message: "Call me back please",
		PageURL: "https://bikes.example/contact", Channel: channel, VisitorType: parley.VisitorHuman,
	}
}

// events records what a turn emitted, in order.
type events struct{ kinds []llm.EventKind }

func (ev *events) emit(e llm.Event) { ev.kinds = append(ev.kinds, e.Kind) }

func TestEngineReply(t *testing.T) {
	t.Parallel()

	t.Run("a lead turn is stored with one store call that gives the lease back", func(t *testing.T) {
		t.Parallel()
		srv, p := engineFixture(t,
			llmtest.Turn{Text: []string{"One moment."}, ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "contact_form",
				Arguments: []string{`{"fullName":"Ada Lovelace","workEmail":"ada@example.com"}`}}}},
			llmtest.Turn{Text: []string{"Done: we will call you."}})
		store := &memStore{tools: []parley.Tool{toolstest.ContactForm(t)}}
		var ev events
		out, err := testEngine(store, p).Reply(context.Background(), testInput(parley.ChannelAgent), ev.emit)
		if err != nil {
			t.Fatal(err)
		}
		if len(ev.kinds) < 2 || ev.kinds[0] != EventReady || ev.kinds[1] != llm.EventText {
			t.Fatalf("events %v: want EventReady before the first text", ev.kinds)
		}
		if len(store.saved) != 1 {
			t.Fatalf("%d store calls, want 1", len(store.saved))
		}
		rec := store.saved[0]
		if rec.LeaseHolder == "" || store.holder != "" || store.releases != 0 {
			t.Errorf("lease: record holder %q, still held by %q, %d separate releases", rec.LeaseHolder, store.holder, store.releases)
		}
		if rec.Reply != "One moment.\n\nDone: we will call you." || len(rec.ToolRuns) != 1 {
			t.Fatalf("record %+v", rec)
		}
		sub := rec.ToolRuns[0].Submission
		if sub == nil || sub.Channel != parley.ChannelAPI || sub.VisitorID == nil || *sub.VisitorID != "visitor-1" ||
			sub.PageURL == nil || !strings.Contains(string(sub.Input), "ada@example.com") {
			t.Fatalf("submission %+v", sub)
		}
		if n := len(rec.Transcript); n != 2 || rec.Transcript[0].Role != "user" || rec.Transcript[1].Role != "assistant" {
			t.Errorf("transcript %+v", rec.Transcript)
		}
		if out.MessageID != "msg-reply" || out.MessageCount != 2 || out.ConversationID != "conv-1" ||
			out.Source != "managed" || out.Provider != "openai" || out.Model != "test-model" || !out.Result.ContactSubmitted() {
			t.Errorf("output %+v", out)
		}
		if n := len(srv.Requests()); n != 2 {
			t.Errorf("%d model calls, want 2", n)
		}
	})

	t.Run("a turn that cannot be stored says so and gives the lease back", func(t *testing.T) {
		t.Parallel()
		_, p := engineFixture(t, llmtest.Turn{Text: []string{"Hello"}})
		store := &memStore{saveErr: errors.New("disk full")}
		out, err := testEngine(store, p).Reply(context.Background(), testInput(parley.ChannelWeb), func(llm.Event) {})
		if !errors.Is(err, ErrNotStored) || out == nil || out.Result.Text != "Hello" {
			t.Fatalf("err %v, out %+v", err, out)
		}
		if store.holder != "" || store.releases != 1 {
			t.Errorf("lease held by %q after the turn, %d releases", store.holder, store.releases)
		}
	})

	t.Run("a refused start calls no model and keeps nothing", func(t *testing.T) {
		t.Parallel()
		srv, p := engineFixture(t, llmtest.Turn{Text: []string{"never"}})
		refused := &parley.Error{Kind: parley.KindRateLimited, Code: "LIMIT_REACHED", Message: "limit"}
		store := &memStore{startErr: refused}
		var ev events
		out, err := testEngine(store, p).Reply(context.Background(), testInput(parley.ChannelWeb), ev.emit)
		if !errors.Is(err, refused) || out != nil || len(ev.kinds) != 0 {
			t.Fatalf("err %v, out %+v, events %v", err, out, ev.kinds)
		}
		if store.holder != "" || len(srv.Requests()) != 0 || len(store.saved) != 0 {
			t.Errorf("lease %q, %d model calls, %d saves", store.holder, len(srv.Requests()), len(store.saved))
		}
	})

	t.Run("a busy session is refused after the wait", func(t *testing.T) {
		t.Parallel()
		_, p := engineFixture(t)
		store := &memStore{holder: "another turn"}
		_, err := testEngine(store, p).Reply(context.Background(), testInput(parley.ChannelWeb), func(llm.Event) {})
		if !errors.Is(err, ErrSessionBusy) {
			t.Fatalf("err %v, want ErrSessionBusy", err)
		}
		if store.holder != "another turn" {
			t.Errorf("the other turn's lease was taken: %q", store.holder)
		}
	})

	t.Run("the caller's own model wins over the managed one", func(t *testing.T) {
		t.Parallel()
		managed, mp := engineFixture(t, llmtest.Turn{Text: []string{"managed"}})
		own, op := engineFixture(t, llmtest.Turn{Text: []string{"own"}})
		in := testInput(parley.ChannelWeb)
		in.LLM = op
		out, err := testEngine(&memStore{}, mp).Reply(context.Background(), in, func(llm.Event) {})
		if err != nil || out.Result.Text != "own" || len(managed.Requests()) != 0 || len(own.Requests()) != 1 {
			t.Fatalf("err %v, out %+v", err, out)
		}
	})

	t.Run("history comes from the lease's read", func(t *testing.T) {
		t.Parallel()
		srv, p := engineFixture(t, llmtest.Turn{Text: []string{"again"}})
		store := &memStore{conv: &parley.Conversation{ID: "conv-1", MessageCount: 2, Status: parley.StatusBot},
			turns: []parley.Turn{{Role: "user", Content: "first"}, {Role: "assistant", Content: "first answer"}}}
		out, err := testEngine(store, p).Reply(context.Background(), testInput(parley.ChannelWeb), func(llm.Event) {})
		if err != nil || out.MessageCount != 4 {
			t.Fatalf("err %v, out %+v", err, out)
		}
		msgs := srv.Requests()[0].Chat.Messages
		var got []string
		for _, m := range msgs[1:] { // after the system prompt
			got = append(got, m.Role+":"+string(m.Content))
		}
		if strings.Join(got, "|") != "user:first|assistant:first answer|user:Call me back please" {
			t.Errorf("model was sent %q", got)
		}
	})

	t.Run("a message stored with the lease is not stored again", func(t *testing.T) {
		t.Parallel()
		srv, p := engineFixture(t, llmtest.Turn{Text: []string{"Hello"}}, llmtest.Turn{Text: []string{"Sure"}})
		store := &memStore{opens: true}
		out, err := testEngine(store, p).Reply(context.Background(), testInput(parley.ChannelWeb), func(llm.Event) {})
		if err != nil || out.ConversationID != "conv-1" || out.MessageCount != 2 {
			t.Fatalf("first turn: err %v, out %+v", err, out)
		}
		in := testInput(parley.ChannelWeb)
		in.Message = "And now?"
		out, err = testEngine(store, p).Reply(context.Background(), in, func(llm.Event) {})
		if err != nil || out.MessageCount != 4 {
			t.Fatalf("second turn: err %v, out %+v", err, out)
		}
		if len(store.starts) != 0 || store.leaseCalls != 2 || len(store.saved) != 2 {
			t.Errorf("%d StartTurn calls (want 0), %d leases, %d saves", len(store.starts), store.leaseCalls, len(store.saved))
		}
		// The history is the lease's read, then the message stored with
		// it, once.
		msgs := srv.Requests()[1].Chat.Messages
		var got []string
		for _, m := range msgs[1:] {
			got = append(got, m.Role+":"+string(m.Content))
		}
		if strings.Join(got, "|") != "user:Call me back please|assistant:Hello|user:And now?" {
			t.Errorf("model was sent %q", got)
		}
	})

	t.Run("a segment that shows its form when asked offers it in the web channel, the test chat included", func(t *testing.T) {
		t.Parallel()
		form := &parley.FormConfig{Enabled: true, Intent: "a call back", Display: parley.FormWhenAsked,
			Fields: []parley.FormField{{Name: "email", Label: "Email", Type: "email", Required: true}}}
		for _, tc := range []struct {
			channel string
			test    bool
			display string
			want    bool
		}{
			{parley.ChannelWeb, false, parley.FormWhenAsked, true},
			{parley.ChannelWeb, true, parley.FormWhenAsked, true},
			{parley.ChannelVoice, false, parley.FormWhenAsked, false},
			{parley.ChannelWeb, false, parley.FormAfterFirstAnswer, false},
		} {
			srv, p := engineFixture(t, llmtest.Turn{Text: []string{"Hi"}})
			in := testInput(tc.channel)
			in.Test = tc.test
			f := *form
			f.Display = tc.display
			in.Segment.FormConfig = &f
			if _, err := testEngine(&memStore{}, p).Reply(context.Background(), in, func(llm.Event) {}); err != nil {
				t.Fatal(err)
			}
			offered := false
			for _, tool := range srv.Requests()[0].Chat.Tools {
				offered = offered || tool.Function.Name == "offer_contact_form"
			}
			if offered != tc.want {
				t.Errorf("%s (test %v, display %s): offer_contact_form offered %v, want %v", tc.channel, tc.test, tc.display, offered, tc.want)
			}
		}
	})

	t.Run("an answer's citation markers mark the entries it rests on and leave its text", func(t *testing.T) {
		t.Parallel()
		_, p := engineFixture(t, llmtest.Turn{Text: []string{"We open at 9 ", "[1", "]. Returns take 30 days [2][9]."}})
		store := &memStore{corpus: []parley.CorpusEntry{
			{ID: "c-hours", Title: "Opening hours", Content: "9 to 6.", Priority: 2},
			{ID: "c-returns", Title: "Returns", Content: "30 days.", Priority: 1},
		}}
		var streamed strings.Builder
		out, err := testEngine(store, p).Reply(context.Background(), testInput(parley.ChannelWeb), func(ev llm.Event) { streamed.WriteString(ev.Text) })
		if err != nil {
			t.Fatal(err)
		}
		want := []parley.KnowledgeRef{{ID: "c-hours", Title: "Opening hours", Cited: true}, {ID: "c-returns", Title: "Returns", Cited: true}}
		if text := "We open at 9. Returns take 30 days[9]."; out.Result.Text != text || streamed.String() != text || !slices.Equal(out.Knowledge, want) {
			t.Errorf("text %q, streamed %q, knowledge %+v; want %q and %+v", out.Result.Text, streamed.String(), out.Knowledge, text, want)
		}
	})

	t.Run("a turn lists the knowledge its prompt held and stores it with the answer", func(t *testing.T) {
		t.Parallel()
		_, p := engineFixture(t, llmtest.Turn{Text: []string{"Hi"}}, llmtest.Turn{Text: []string{"Hi"}})
		summary := "How returns work."
		store := &memStore{corpus: []parley.CorpusEntry{
			{ID: "c-hours", Title: "Opening hours", Content: "9 to 6.", Priority: 2},
			{ID: "c-returns", Title: "Returns", Content: "Long text.", Summary: &summary, Priority: 1},
			{ID: "c-huge", Title: "Too long for the prompt", Content: strings.Repeat("x", KnowledgeCap)},
		}}
		in := testInput(parley.ChannelWeb)
		in.Test = true
		out, err := testEngine(store, p).Reply(context.Background(), in, func(llm.Event) {})
		if err != nil {
			t.Fatal(err)
		}
		want := []parley.KnowledgeRef{{ID: "c-hours", Title: "Opening hours"}, {ID: "c-returns", Title: "Returns", Summarized: true}}
		if !slices.Equal(out.Knowledge, want) {
			t.Errorf("knowledge %+v, want %+v (the entry that does not fit left out)", out.Knowledge, want)
		}
		if len(store.starts) != 1 || !store.starts[0].Test {
			t.Errorf("starts %+v, want one test start", store.starts)
		}

		// A visitor's turn records it too, stored with the answer.
		out, err = testEngine(store, p).Reply(context.Background(), testInput(parley.ChannelWeb), func(llm.Event) {})
		if err != nil || !slices.Equal(out.Knowledge, want) || len(store.starts) != 2 || store.starts[1].Test {
			t.Errorf("visitor turn: knowledge %+v, starts %+v, err %v", out.Knowledge, store.starts, err)
		}
		if n := len(store.saved); n != 2 || !slices.Equal(store.saved[n-1].Knowledge, want) {
			t.Errorf("saved %+v, want the answer stored with %+v", store.saved, want)
		}
	})
}
