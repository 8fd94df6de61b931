package db_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
)

func TestCreateSubmission(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("PayloadShape", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupSubmissions(t)
		var turns []parley.Turn
		for i := range 14 {
			turns = append(turns, parley.Turn{Role: "user", Content: fmt.Sprintf("u%d", i)}, parley.Turn{Role: "assistant", Content: fmt.Sprintf("a%d", i)})
		}
		turns = append(turns, parley.Turn{Role: "tool", Content: "{}"}, parley.Turn{Role: "system", Content: "prompt"})
		sub, ev, err := f.Store.CreateSubmission(ctx, f.NewSubmission(), turns)
		if err != nil {
			t.Fatal(err)
		}
		if sub.Status != "NEW" || ev.Type != "submission.created" || ev.SubmissionID == nil || *ev.SubmissionID != sub.ID {
			t.Fatalf("submission %+v event %+v", sub, ev)
		}
		evs := f.Events(t, f.Tenant.ID)
		if len(evs) != 1 || evs[0].ID != ev.ID {
			t.Fatalf("%d events recorded", len(evs))
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(evs[0].Payload, &top); err != nil {
			t.Fatal(err)
		}
		if got := dbtest.Keys(top); !slices.Equal(got, []string{"createdAt", "data", "event"}) {
			t.Errorf("top-level keys %v", got)
		}
		var data map[string]json.RawMessage
		if err := json.Unmarshal(top["data"], &data); err != nil {
			t.Fatal(err)
		}
		want := []string{"channel", "conversationId", "createdAt", "id", "input", "messages", "pageUrl", "result",
			"status", "toolId", "toolName", "toolType", "visitorUserId"}
		if got := dbtest.Keys(data); !slices.Equal(got, want) {
			t.Errorf("data keys %v, want %v", got, want)
		}
		var p db.EventPayload
		if err := json.Unmarshal(evs[0].Payload, &p); err != nil {
			t.Fatal(err)
		}
		d := p.Data
		if p.Event != "submission.created" || d.ID != sub.ID || *d.ToolID != f.Tool.ID || d.ToolType != "SUBMIT_FORM" ||
			d.ToolName != "Contact form" || d.Channel != "web" || d.Status != "NEW" || *d.ConversationID != f.Conversation.ID ||
			*d.VisitorUserID != f.VisitorID || *d.PageURL != "https://example.com/pricing" || !d.CreatedAt.Equal(sub.CreatedAt) {
			t.Errorf("payload %+v", p)
		}
		var input map[string]string
		if err := json.Unmarshal(d.Input, &input); err != nil || input["work_email"] != "ada@example.com" {
			t.Errorf("input %s", d.Input)
		}
		if len(d.Messages) != 10 || d.Messages[0].Content != "u9" || d.Messages[9].Content != "a13" {
			t.Errorf("messages %+v", d.Messages)
		}
		for _, m := range d.Messages {
			if m.Role != "user" && m.Role != "assistant" {
				t.Errorf("role %s in payload", m.Role)
			}
		}
	})

	t.Run("FormWithoutLinksOrMessages", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupSubmissions(t)
		_, _, err := f.Store.CreateSubmission(ctx, parley.NewSubmission{TenantID: f.Tenant.ID, ToolType: "SUBMIT_FORM",
			ToolName: "Form", Channel: "form", Input: json.RawMessage(`{"email":"x@y.z"}`)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var data map[string]json.RawMessage
		var top struct{ Data json.RawMessage }
		_ = json.Unmarshal(f.Events(t, f.Tenant.ID)[0].Payload, &top)
		_ = json.Unmarshal(top.Data, &data)
		if _, ok := data["messages"]; ok {
			t.Errorf("messages present without turns")
		}
		for _, k := range []string{"toolId", "conversationId", "visitorUserId", "pageUrl"} {
			if string(data[k]) != "null" {
				t.Errorf("%s = %s, want null", k, data[k])
			}
		}
		if string(data["result"]) != "{}" {
			t.Errorf("result = %s", data["result"])
		}
	})

	t.Run("RolledBackLeavesNeither", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupSubmissions(t)
		boom := errors.New("boom")
		err := db.InTx(f.Store, ctx, func(tx pgx.Tx) error {
			if _, _, err := db.CreateSubmissionInTx(f.Store, ctx, tx, f.NewSubmission(), nil); err != nil {
				return err
			}
			// a later statement of the same transaction fails
			if _, err := tx.Exec(ctx, `SELECT 1/0`); err != nil {
				return err
			}
			return boom
		})
		if err == nil {
			t.Fatal("transaction succeeded")
		}
		var n int
		if err := f.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM submissions WHERE tenant_id = $1`, f.Tenant.ID).Scan(&n); err != nil || n != 0 {
			t.Errorf("%d submissions left, %v", n, err)
		}
		if evs := f.Events(t, f.Tenant.ID); len(evs) != 0 {
			t.Errorf("%d events left", len(evs))
		}
	})

	t.Run("Invalid", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupSubmissions(t)
		for name, mod := range map[string]func(*parley.NewSubmission){
			"Channel":     func(s *parley.NewSubmission) { s.Channel = "fax" },
			"InputArray":  func(s *parley.NewSubmission) { s.Input = json.RawMessage(`[1]`) },
			"InputBroken": func(s *parley.NewSubmission) { s.Input = json.RawMessage(`{`) },
			"NoToolType":  func(s *parley.NewSubmission) { s.ToolType = "" },
		} {
			s := f.NewSubmission()
			mod(&s)
			if _, _, err := f.Store.CreateSubmission(ctx, s, nil); parley.ErrorKind(err) != parley.KindInvalid {
				t.Errorf("%s: %v", name, err)
			}
		}
	})

	t.Run("OtherTenantsLinks", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupSubmissions(t)
		for name, mod := range map[string]func(*parley.NewSubmission){
			"Tool":         func(s *parley.NewSubmission) { s.ToolID = &f.Tool.ID },
			"Conversation": func(s *parley.NewSubmission) { s.ConversationID = &f.Conversation.ID },
			"Visitor":      func(s *parley.NewSubmission) { s.VisitorID = &f.VisitorID },
		} {
			s := parley.NewSubmission{TenantID: f.Other.ID, ToolType: "SUBMIT_FORM", ToolName: "x", Channel: "api"}
			mod(&s)
			if _, _, err := f.Store.CreateSubmission(ctx, s, nil); parley.ErrorKind(err) != parley.KindNotFound {
				t.Errorf("%s: %v", name, err)
			}
		}
		if evs := f.Events(t, f.Other.ID); len(evs) != 0 {
			t.Errorf("%d events recorded", len(evs))
		}
	})

	t.Run("DeletedLinksBecomeNull", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupSubmissions(t)
		sub, _, err := f.Store.CreateSubmission(ctx, f.NewSubmission(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Store.DeleteTool(ctx, f.Tenant.ID, f.Tool.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Store.Pool().Exec(ctx, `DELETE FROM conversations WHERE id = $1`, f.Conversation.ID); err != nil {
			t.Fatal(err)
		}
		got, err := f.Store.Submission(ctx, f.Tenant.ID, sub.ID)
		if err != nil || got.ToolID != nil || got.ConversationID != nil || got.VisitorID == nil {
			t.Fatalf("after deleting tool and conversation: %+v, %v", got, err)
		}
		if err := f.Store.DeleteVisitor(ctx, f.Tenant.ID, f.VisitorID); err != nil {
			t.Fatal(err)
		}
		got, err = f.Store.Submission(ctx, f.Tenant.ID, sub.ID)
		if err != nil || got.VisitorID != nil || got.ToolName != "Contact form" {
			t.Fatalf("after deleting visitor: %+v, %v", got, err)
		}
		// the frozen payload keeps the old links
		if evs := f.Events(t, f.Tenant.ID); len(evs) != 1 || evs[0].SubmissionID == nil {
			t.Errorf("events %+v", evs)
		}
	})
}

func TestUpdateSubmissionStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("RecordsEventWithPreviousStatus", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupSubmissions(t)
		sub, _, err := f.Store.CreateSubmission(ctx, f.NewSubmission(), nil)
		if err != nil {
			t.Fatal(err)
		}
		got, ev, err := f.Store.UpdateSubmissionStatus(ctx, f.Tenant.ID, sub.ID, "CONTACTED")
		if err != nil || got.Status != "CONTACTED" || ev.Type != "submission.updated" {
			t.Fatalf("%+v %+v %v", got, ev, err)
		}
		var p db.EventPayload
		if err := json.Unmarshal(ev.Payload, &p); err != nil {
			t.Fatal(err)
		}
		if p.Event != "submission.updated" || p.Data.Status != "CONTACTED" || p.Data.PreviousStatus != "NEW" || p.Data.ID != sub.ID {
			t.Errorf("payload %+v", p)
		}
		// same status: no change, no event
		if _, ev, err := f.Store.UpdateSubmissionStatus(ctx, f.Tenant.ID, sub.ID, "CONTACTED"); err != nil || ev.ID != "" {
			t.Errorf("repeat: %+v %v", ev, err)
		}
		if _, _, err := f.Store.UpdateSubmissionStatus(ctx, f.Tenant.ID, sub.ID, "RESOLVED"); err != nil {
			t.Fatal(err)
		}
		evs := f.Events(t, f.Tenant.ID)
		if len(evs) != 3 {
			t.Fatalf("%d events", len(evs))
		}
		_ = json.Unmarshal(evs[2].Payload, &p)
		if p.Data.Status != "RESOLVED" || p.Data.PreviousStatus != "CONTACTED" {
			t.Errorf("last payload %+v", p.Data)
		}
	})

	t.Run("BadStatusAndIsolation", func(t *testing.T) {
		t.Parallel()
		f := dbtest.SetupSubmissions(t)
		sub, _, err := f.Store.CreateSubmission(ctx, f.NewSubmission(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"", "new", "DONE"} {
			_, _, err := f.Store.UpdateSubmissionStatus(ctx, f.Tenant.ID, sub.ID, s)
			dbtest.WantKind(t, err, parley.KindInvalid)
		}
		_, _, err = f.Store.UpdateSubmissionStatus(ctx, f.Other.ID, sub.ID, "CONTACTED")
		dbtest.WantKind(t, err, parley.KindNotFound)
		_, _, err = f.Store.UpdateSubmissionStatus(ctx, f.Tenant.ID, "not-a-uuid", "CONTACTED")
		dbtest.WantKind(t, err, parley.KindNotFound)
		_, err = f.Store.Submission(ctx, f.Other.ID, sub.ID)
		dbtest.WantKind(t, err, parley.KindNotFound)
		if got, _ := f.Store.Submission(ctx, f.Tenant.ID, sub.ID); got.Status != "NEW" {
			t.Errorf("status %s", got.Status)
		}
		if evs := f.Events(t, f.Tenant.ID); len(evs) != 1 {
			t.Errorf("%d events", len(evs))
		}
	})
}
