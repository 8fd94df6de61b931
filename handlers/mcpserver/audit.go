package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/resource"
)

// toolAudit is what a tool's success records in the audit log.
type toolAudit struct {
	action, target string
}

// toolAudits are the tools whose changes the audit log records: the
// deletions, the settings and an answer's correction (the others change
// content, which the log leaves out, as it does on the REST API).
var toolAudits = map[string]toolAudit{
	"delete_corpus_entry": {audit.ActionDeleted, "Knowledge base entry"},
	"update_persona":      {audit.ActionSettingsChanged, "Persona"},
	"correct_answer":      {audit.ActionAnswerCorrected, "Knowledge base entry"},
}

// audited wraps the Run of the tools toolAudits names, so that each
// success is recorded, whether the tool runs at /mcp or in a chat holding
// an admin token.
func (h *Handler) audited(tools []ManageTool) []ManageTool {
	for i, tool := range tools {
		a, ok := toolAudits[tool.Name]
		if !ok {
			continue
		}
		run := tool.Run
		tools[i].Run = func(ctx context.Context, t parley.Tenant, p auth.Principal, args map[string]json.RawMessage) (any, error) {
			res, err := run(ctx, t, p, args)
			if err == nil {
				e := h.auditEntry(ctx, t, p, a.action)
				e.Target = a.target
				if id, err := idOf(args); err == nil {
					e.TargetID = id
				} else if u, ok := res.(resource.CorpusUpsertJSON); ok {
					e.TargetID = u.Corpus.ID // the entry a correction made or updated
				}
				e.Details["tool"] = tool.Name
				h.writeAudit(ctx, e)
			}
			return res, err
		}
	}
	return tools
}

// recordRefusal records a tool call refused for a scope the caller lacks.
func (h *Handler) recordRefusal(ctx context.Context, t parley.Tenant, p auth.Principal, tool string, err error) {
	e := h.auditEntry(ctx, t, p, audit.ActionAccessDenied)
	e.Denied, e.Target = true, "MCP tool "+tool
	if pe, ok := err.(*parley.Error); ok {
		e.Details["reason"] = pe.Message
	}
	h.writeAudit(ctx, e)
}

// auditEntry is an entry of t acted on by the caller: the actor /mcp's
// authentication set, else (a chat's admin token) the principal's.
func (h *Handler) auditEntry(ctx context.Context, t parley.Tenant, p auth.Principal, action string) audit.Entry {
	via := audit.ViaMCP
	actor, ok := audit.ActorFrom(ctx)
	if !ok {
		actor, via = handlers.PrincipalActor(p), audit.ViaChat
	}
	actor = handlers.NameActor(ctx, h.DB, t.ID, actor, p)
	return audit.Entry{TenantID: t.ID, At: h.Clock(), Actor: actor, Action: action, Details: map[string]any{"via": via}}
}

// writeAudit records e; a failure is logged: the change is made.
func (h *Handler) writeAudit(ctx context.Context, e audit.Entry) {
	if err := h.DB.RecordAudit(ctx, e); err != nil && h.Logger != nil {
		h.Logger.Error("recording the audit entry", "action", e.Action, "err", err)
	}
}
