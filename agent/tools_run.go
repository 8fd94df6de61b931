package agent

import (
	"context"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/agent/tools"
)

// RunTools runs tool calls made outside a turn of this engine: a voice
// orchestrator's own model calling the tenant's tools (its tool-calls
// event). The tools are the ones a turn of in.Channel would be offered
// (the enrichment chain, so a voice call gets the voice tool set), bound to
// in's tenant and segment and to the conversation conversationID ("" when
// the call has none yet). The caller stores what the executions produced
// (ToolRunOf).
func (e *Engine) RunTools(ctx context.Context, in *TurnInput, conversationID string, calls []llm.ToolCall) ([]tools.Execution, error) {
	in.logger(e)
	data, err := e.Store.PromptData(ctx, in.Tenant.ID, in.Segment.ID, in.Locale, "", 0)
	if err != nil {
		return nil, err
	}
	var cal *parley.CalendarConnector
	if e.readsCalendar(data) {
		if cal, err = e.Calendar.CalendarConnector(ctx, in.Tenant.ID); err != nil {
			return nil, err
		}
	}
	tt := Enrich(data.Tools, EnrichFacts{SegmentID: in.Segment.ID, Channel: in.Channel,
		Calendar: cal != nil})
	t := &turn{in: in, conv: parley.Conversation{ID: conversationID}}
	t.reads = &promptReads{calendar: cal}
	registry := tools.NewRegistry(tt.Tools, e.toolDeps(t, tt))
	out := make([]tools.Execution, len(calls))
	for i, c := range calls {
		out[i] = registry.Execute(ctx, c)
		if out[i].Err != nil {
			in.logger(e).Warn("tool failed", "tool", out[i].ToolName, "err", out[i].Err)
		}
	}
	return out, nil
}

// ToolRunOf is an execution as a turn of channel stores it: the tool
// history's entry and the submission it produced, if any (its TenantID and
// ConversationID are left to the caller).
func ToolRunOf(ex tools.Execution, channel string) (parley.ToolRun, error) {
	run, err := toolRun(ex)
	if err == nil && run.Submission != nil {
		run.Submission.Channel = channel
	}
	return run, err
}
