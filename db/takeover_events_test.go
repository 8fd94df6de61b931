package db_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/db/webhooks"
)

func TestTakeoverEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// types lists the events' types, in order.
	types := func(evs []webhooks.Event) []string {
		var out []string
		for _, e := range evs {
			out = append(out, e.Type)
		}
		return out
	}

	// subscribe gives the tenant an endpoint of events.
	subscribe := func(t *testing.T, f *dbtest.ConvFixture, tenantID string, events ...string) string {
		t.Helper()
		ep, err := f.Store.CreateWebhookEndpoint(ctx, tenantID, webhooks.WebhookEndpointWrite{URL: parley.Some("https://hooks.example.com/x"),
			Events: parley.Some(events), SecretSealed: []byte("sealed")})
		if err != nil {
			t.Fatal(err)
		}
		return ep.ID
	}

	t.Run("each change records one event with its conversation, and only a change", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		subscribe(t, f, f.Tenant.ID, parley.WebhookEvents...)
		var segID, segSlug string
		if err := f.Store.Pool().QueryRow(ctx, `SELECT id, slug FROM segments WHERE tenant_id = $1 AND is_default`,
			f.Tenant.ID).Scan(&segID, &segSlug); err != nil {
			t.Fatal(err)
		}
		visitor := f.Visitor(t, f.Tenant.ID)
		c := f.Start(t, parley.ConversationStart{SessionID: "events", SegmentID: &segID, VisitorID: &visitor,
			Channel: parley.ChannelWeb, PageURL: dbtest.Ptr("https://shop.example/pricing")})
		step := func(name string, want []string, fn func() error) []webhooks.Event {
			t.Helper()
			before := len(f.Events(t, f.Tenant.ID))
			if err := fn(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			evs := f.Events(t, f.Tenant.ID)[before:]
			if got := types(evs); !slices.Equal(got, want) {
				t.Fatalf("%s: events %v, want %v", name, got, want)
			}
			for _, e := range evs {
				if e.ConversationID == nil || *e.ConversationID != c.ID || e.SubmissionID != nil {
					t.Errorf("%s: event %s names conversation %v, submission %v", name, e.Type, e.ConversationID, e.SubmissionID)
				}
			}
			return evs
		}
		move := func(to string, h parley.Holder) func() error {
			return func() error { _, err := f.Store.MoveConversation(ctx, f.Tenant.ID, c.ID, to, h); return err }
		}
		ana := parley.Holder{Name: "Ana"}

		evs := step("the model escalates", []string{webhooks.EventConversationEscalated}, func() error {
			return f.Store.EscalateConversation(ctx, f.Tenant.ID, c.ID)
		})
		var ce db.ConversationEventPayload
		if err := json.Unmarshal(evs[0].Payload, &ce); err != nil {
			t.Fatal(err)
		}
		d := ce.Data
		if ce.Event != webhooks.EventConversationEscalated || d.ID != c.ID || d.SessionID != "events" || d.Channel != parley.ChannelWeb ||
			d.Status != parley.StatusEscalated || d.PreviousStatus != parley.StatusBot || d.EscalatedAt == nil || d.TakenAt != nil ||
			d.Assignee != nil || d.Segment == nil || *d.Segment != segSlug || d.VisitorID == nil || *d.VisitorID != visitor ||
			d.PageURL == nil || *d.PageURL != "https://shop.example/pricing" {
			t.Errorf("conversation.escalated payload %s", evs[0].Payload)
		}
		step("escalated again: it still waits", nil, func() error { return f.Store.EscalateConversation(ctx, f.Tenant.ID, c.ID) })

		evs = step("a reply takes it", []string{webhooks.EventConversationTaken, webhooks.EventMessageCreated}, func() error {
			_, _, err := f.Store.AddHumanMessage(ctx, f.Tenant.ID, c.ID, ana, "Hello, Ana here")
			return err
		})
		ce = db.ConversationEventPayload{}
		_ = json.Unmarshal(evs[0].Payload, &ce)
		if ce.Data.Status != parley.StatusHuman || ce.Data.PreviousStatus != parley.StatusEscalated || ce.Data.Assignee == nil ||
			*ce.Data.Assignee != "Ana" || ce.Data.TakenAt == nil || ce.Data.EscalatedAt == nil {
			t.Errorf("conversation.taken payload %s", evs[0].Payload)
		}
		var me db.MessageEventPayload
		_ = json.Unmarshal(evs[1].Payload, &me)
		if me.Event != webhooks.EventMessageCreated || me.Data.ID == "" || me.Data.ConversationID != c.ID || me.Data.Role != parley.RoleHuman ||
			me.Data.Content != "Hello, Ana here" || me.Data.AuthorName == nil || *me.Data.AuthorName != "Ana" ||
			me.Data.Conversation.ID != c.ID || me.Data.Conversation.Status != parley.StatusHuman || me.Data.Conversation.PreviousStatus != "" {
			t.Errorf("message.created payload %s", evs[1].Payload)
		}
		var raw map[string]map[string]json.RawMessage
		_ = json.Unmarshal(evs[1].Payload, &raw)
		if _, ok := raw["data"]["conversation"]; !ok || string(raw["data"]["authorName"]) != `"Ana"` {
			t.Errorf("message.created data %s", evs[1].Payload)
		}

		step("taking it again: one already holds it", nil, move(parley.StatusHuman, ana))
		step("another reply", []string{webhooks.EventMessageCreated}, func() error {
			_, _, err := f.Store.AddHumanMessage(ctx, f.Tenant.ID, c.ID, ana, "Let me check")
			return err
		})
		m, err := db.AppendMessage(ctx, f.Store.Pool(), f.Tenant.ID, c.ID, parley.RoleUser, "Thanks!", nil)
		if err != nil {
			t.Fatal(err)
		}
		evs = step("the visitor writes to the person", []string{webhooks.EventMessageCreated}, func() error {
			return f.Store.AnnounceVisitorMessage(ctx, f.Tenant.ID, c.ID, m.ID)
		})
		me = db.MessageEventPayload{}
		_ = json.Unmarshal(evs[0].Payload, &me)
		if me.Data.ID != m.ID || me.Data.Role != parley.RoleUser || me.Data.Content != "Thanks!" || me.Data.AuthorName != nil ||
			me.Data.Conversation.Status != parley.StatusHuman {
			t.Errorf("the visitor's message.created payload %s", evs[0].Payload)
		}
		step("back to the queue", []string{webhooks.EventConversationEscalated}, move(parley.StatusEscalated, parley.Holder{}))
		step("closed", []string{webhooks.EventConversationClosed}, move(parley.StatusClosed, parley.Holder{}))
		step("closed again", nil, move(parley.StatusClosed, parley.Holder{}))
		evs = step("the assistant answers again", []string{webhooks.EventConversationHandedBack}, move(parley.StatusBot, parley.Holder{}))
		ce = db.ConversationEventPayload{}
		_ = json.Unmarshal(evs[0].Payload, &ce)
		if ce.Data.Status != parley.StatusBot || ce.Data.PreviousStatus != parley.StatusClosed || ce.Data.Assignee != nil || ce.Data.TakenAt != nil {
			t.Errorf("conversation.handed_back payload %s", evs[0].Payload)
		}
	})

	t.Run("a failed move records nothing", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		subscribe(t, f, f.Tenant.ID, parley.WebhookEvents...)
		c := f.Start(t, parley.ConversationStart{SessionID: "failed"})
		// Of two people taking it at once, only the winner's take is an event.
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, name := range []string{"Ana", "Bo"} {
			wg.Go(func() {
				_, errs[i] = f.Store.MoveConversation(ctx, f.Tenant.ID, c.ID, parley.StatusHuman, parley.Holder{Name: name})
			})
		}
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("errors %v", errs)
		}
		loser := parley.Holder{Name: "Bo"}
		if errs[0] != nil {
			loser.Name = "Ana"
		}
		_, _, err := f.Store.AddHumanMessage(ctx, f.Tenant.ID, c.ID, loser, "me too")
		dbtest.WantKind(t, err, parley.KindConflict)
		_, err = f.Store.MoveConversation(ctx, f.Tenant.ID, c.ID, "OPEN", parley.Holder{})
		dbtest.WantKind(t, err, parley.KindInvalid)
		if got := types(f.Events(t, f.Tenant.ID)); !slices.Equal(got, []string{webhooks.EventConversationTaken}) {
			t.Errorf("events %v", got)
		}
		// The event is the change's own: a turn that escalates and then fails
		// leaves neither the status nor the event nor its delivery.
		c2 := f.Start(t, parley.ConversationStart{SessionID: "rolled-back"})
		failed := errors.New("the turn failed after escalating")
		err = db.InTx(f.Store, ctx, func(tx pgx.Tx) error {
			if err := db.EscalateConversationTx(f.Store, ctx, tx, f.Tenant.ID, c2.ID); err != nil {
				return err
			}
			return failed
		})
		if !errors.Is(err, failed) {
			t.Fatal(err)
		}
		var deliveries int
		if err := f.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE tenant_id = $1`, f.Tenant.ID).Scan(&deliveries); err != nil {
			t.Fatal(err)
		}
		got, _ := f.Store.Conversation(ctx, f.Tenant.ID, c2.ID)
		if evs := f.Events(t, f.Tenant.ID); len(evs) != 1 || deliveries != 1 || got.Status != parley.StatusBot {
			t.Errorf("after a rollback: %v events, %d deliveries, status %s", types(evs), deliveries, got.Status)
		}
	})

	t.Run("the model's escalation is recorded with its turn, a call's with its tool runs", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		subscribe(t, f, f.Tenant.ID, webhooks.EventConversationEscalated)
		c := f.Start(t, parley.ConversationStart{SessionID: "turn"})
		if _, err := f.Store.SaveTurn(ctx, parley.TurnRecord{TenantID: f.Tenant.ID, ConversationID: c.ID, SessionID: "turn",
			Reply: "Let me find someone for you.", Escalated: true}); err != nil {
			t.Fatal(err)
		}
		call := f.Start(t, parley.ConversationStart{SessionID: "call", Channel: parley.ChannelVoice})
		if err := f.Store.SaveVoiceToolRuns(ctx, f.Tenant.ID, &call.ID, nil, true); err != nil {
			t.Fatal(err)
		}
		evs := f.Events(t, f.Tenant.ID)
		if got := types(evs); !slices.Equal(got, []string{webhooks.EventConversationEscalated, webhooks.EventConversationEscalated}) ||
			*evs[0].ConversationID != c.ID || *evs[1].ConversationID != call.ID {
			t.Errorf("events %v", got)
		}
		var ce db.ConversationEventPayload
		if err := json.Unmarshal(evs[1].Payload, &ce); err != nil || ce.Data.Channel != parley.ChannelVoice || ce.Data.PreviousStatus != parley.StatusBot {
			t.Errorf("a call's escalation %s %v", evs[1].Payload, err)
		}
	})

	t.Run("only the tenant's subscribed endpoints get a delivery", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		taken := subscribe(t, f, f.Tenant.ID, webhooks.EventConversationTaken)
		messages := subscribe(t, f, f.Tenant.ID, webhooks.EventMessageCreated, webhooks.EventSubmissionCreated)
		submissions := subscribe(t, f, f.Tenant.ID, webhooks.EventSubmissionCreated, webhooks.EventSubmissionUpdated)
		other := subscribe(t, f, f.Other.ID, parley.WebhookEvents...)
		c := f.Start(t, parley.ConversationStart{SessionID: "subscribed"})
		if _, _, err := f.Store.AddHumanMessage(ctx, f.Tenant.ID, c.ID, parley.Holder{Name: "Ana"}, "Hi"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Store.MoveConversation(ctx, f.Tenant.ID, c.ID, parley.StatusClosed, parley.Holder{}); err != nil {
			t.Fatal(err)
		}
		// Another tenant's id is not found, and moves nothing.
		_, err := f.Store.MoveConversation(ctx, f.Other.ID, c.ID, parley.StatusBot, parley.Holder{})
		dbtest.WantKind(t, err, parley.KindNotFound)
		dbtest.WantKind(t, f.Store.AnnounceVisitorMessage(ctx, f.Other.ID, c.ID, c.ID), parley.KindNotFound)
		for id, want := range map[string][]string{taken: {webhooks.EventConversationTaken}, messages: {webhooks.EventMessageCreated},
			submissions: nil, other: nil} {
			rows, _ := f.Store.Pool().Query(ctx, `SELECT event FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY created_at`, id)
			got, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil || !slices.Equal(got, want) {
				t.Errorf("endpoint %s: deliveries %v, want %v (%v)", id, got, want, err)
			}
		}
		if evs := f.Events(t, f.Other.ID); len(evs) != 0 {
			t.Errorf("the other tenant has events %v", types(evs))
		}
		// No endpoint receives conversation.closed: it was not recorded.
		if got := types(f.Events(t, f.Tenant.ID)); !slices.Equal(got, []string{webhooks.EventConversationTaken, webhooks.EventMessageCreated}) {
			t.Errorf("events %v", got)
		}
	})

	t.Run("a tenant without endpoints records no conversation events", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupConversations(t)
		off := subscribe(t, f, f.Tenant.ID, parley.WebhookEvents...)
		if _, err := f.Store.UpdateWebhookEndpoint(ctx, f.Tenant.ID, off, webhooks.WebhookEndpointWrite{Enabled: parley.Some(false)}); err != nil {
			t.Fatal(err)
		}
		c := f.Start(t, parley.ConversationStart{SessionID: "unheard"})
		if err := f.Store.EscalateConversation(ctx, f.Tenant.ID, c.ID); err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.Store.AddHumanMessage(ctx, f.Tenant.ID, c.ID, parley.Holder{Name: "Ana"}, "Hi"); err != nil {
			t.Fatal(err)
		}
		m, err := db.AppendMessage(ctx, f.Store.Pool(), f.Tenant.ID, c.ID, parley.RoleUser, "Thanks", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Store.AnnounceVisitorMessage(ctx, f.Tenant.ID, c.ID, m.ID); err != nil {
			t.Fatal(err)
		}
		dbtest.WantKind(t, f.Store.AnnounceVisitorMessage(ctx, f.Tenant.ID, c.ID, c.ID), parley.KindNotFound)
		got, _ := f.Store.Conversation(ctx, f.Tenant.ID, c.ID)
		if evs := f.Events(t, f.Tenant.ID); len(evs) != 0 || got.Status != parley.StatusHuman || got.MessageCount != 3 {
			t.Errorf("events %v, conversation %+v", types(evs), got)
		}
	})
}
