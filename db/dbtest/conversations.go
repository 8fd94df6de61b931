package dbtest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/visitors"
	"github.com/parley/parley/db/webhooks"
)

// ConvFixture is a tenant of its own with helpers to start conversations.
type ConvFixture struct {
	Store  *db.DB
	Tenant parley.Tenant
	Other  parley.Tenant
}

// SetupConversations creates a ConvFixture on the test binary's database.
func SetupConversations(t *testing.T) *ConvFixture {
	t.Helper()
	store := New(t)
	return &ConvFixture{Store: store, Tenant: NewTenant(t, store), Other: NewTenant(t, store)}
}

// Start starts a conversation of p (of the fixture's tenant unless p names
// another) with a first message.
func (f *ConvFixture) Start(t *testing.T, p parley.ConversationStart) parley.Conversation {
	t.Helper()
	if p.TenantID == "" {
		p.TenantID = f.Tenant.ID
	}
	if p.Limit == 0 {
		p.Limit = 1000
	}
	c, _, _, err := f.Store.StartTurn(context.Background(), p, "hello", nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ToolNames lists the names of the conversation's tool history as the
// tenant sees them, oldest first.
func (f *ConvFixture) ToolNames(t *testing.T, tenantID, conversationID string) []string {
	t.Helper()
	rows, _ := f.Store.Pool().Query(context.Background(), `SELECT tool_name FROM tool_history
		WHERE tenant_id = $1 AND conversation_id = $2 ORDER BY seq`, tenantID, conversationID)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// Visitor creates a visitor of the tenant and returns its id.
func (f *ConvFixture) Visitor(t *testing.T, tenantID string) string {
	t.Helper()
	v, err := f.Store.CreateVisitor(context.Background(), tenantID, visitors.VisitorWrite{Email: parley.Some(fmt.Sprintf("v%d@example.com", time.Now().UnixNano()))})
	if err != nil {
		t.Fatal(err)
	}
	return v.ID
}

// WantKind fails the test unless err is a parley.Error of that kind.
func WantKind(t *testing.T, err error, kind parley.Kind) {
	t.Helper()
	if parley.ErrorKind(err) != kind {
		t.Fatalf("error = %v (kind %d), want kind %d", err, parley.ErrorKind(err), kind)
	}
}

// SubFixture adds a tool, a visitor and a conversation of the tenant.
type SubFixture struct {
	*ConvFixture
	Tool         parley.Tool
	VisitorID    string
	Conversation parley.Conversation
}

// SetupSubmissions creates a SubFixture on the test binary's database.
func SetupSubmissions(t *testing.T) *SubFixture {
	t.Helper()
	f := &SubFixture{ConvFixture: SetupConversations(t)}
	var err error
	f.Tool, err = f.Store.CreateTool(context.Background(), f.Tenant.ID, db.ToolWrite{Name: parley.Some("Contact form"),
		Description: parley.Some("Collects contact details"), Type: parley.Some("SUBMIT_FORM")})
	if err != nil {
		t.Fatal(err)
	}
	f.VisitorID = f.Visitor(t, f.Tenant.ID)
	f.Conversation = f.Start(t, parley.ConversationStart{SessionID: "sub", VisitorID: &f.VisitorID})
	return f
}

// NewSubmission is a submission of the fixture's tool in its conversation.
func (f *SubFixture) NewSubmission() parley.NewSubmission {
	return parley.NewSubmission{TenantID: f.Tenant.ID, ToolID: &f.Tool.ID, ToolType: "SUBMIT_FORM", ToolName: "Contact form",
		ConversationID: &f.Conversation.ID, VisitorID: &f.VisitorID, Channel: "web",
		Input: json.RawMessage(`{"full_name":"Ada","work_email":"ada@example.com"}`), Result: json.RawMessage(`{"success":true}`),
		PageURL: Ptr("https://example.com/pricing")}
}

// Events returns the tenant's recorded events, oldest first.
func (f *ConvFixture) Events(t *testing.T, tenantID string) []webhooks.Event {
	t.Helper()
	rows, _ := f.Store.Pool().Query(context.Background(), `SELECT id, tenant_id, type, submission_id, conversation_id, payload, created_at
		FROM events WHERE tenant_id = $1 ORDER BY created_at, id`, tenantID)
	evs, err := pgx.CollectRows(rows, pgx.RowToStructByName[webhooks.Event])
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// Keys lists m's keys, sorted.
func Keys(m map[string]json.RawMessage) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// Ptr returns a pointer to v.
func Ptr[T any](v T) *T { return &v }
