package tools

import (
	"context"

	"github.com/parley/parley"
)

// Nobody there (issue 36): outside the tenant's hours for a person,
// ESCALATE_TO_HUMAN hands nothing over. The conversation stays the
// assistant's (nobody would take it, and the visitor would wait for no one),
// and the turn ends with the assistant telling the visitor plainly that
// nobody is available right now, offering the lead form (its fields asked
// in the conversation, which the SUBMIT_FORM tool then takes) so that a
// person writes back, or without one asking for their email address. No
// webhook goes and no lead is recorded: the lead is the form the visitor
// fills in.

// awayEscalation is the execution of an escalation while the team is away:
// a success that escalated nothing, whose Final words end the turn.
func (r *Registry) awayEscalation(ctx context.Context, ex *Execution) bool {
	if r.deps.TeamAway == nil || !r.deps.TeamAway(ctx) {
		return false
	}
	notice := "Nobody from the team is available right now. " + parley.LeadOffer(r.leadForm())
	ex.Success = true
	ex.Summary = "Nobody from the team is available at this hour: nothing was handed over, and the visitor was told: " + notice
	ex.Result = map[string]any{"escalated": false, "teamAvailable": false, "message": notice}
	ex.Data = ex.Result
	ex.Final = notice
	return true
}

// leadForm is the fields of the turn's first SUBMIT_FORM tool, nil without.
func (r *Registry) leadForm() []parley.FormField {
	for _, rt := range r.tools {
		if rt.tool.Type == parley.ToolSubmitForm {
			return rt.form.Fields
		}
	}
	return nil
}
