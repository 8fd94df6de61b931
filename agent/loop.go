package agent

import (
	"context"
	"slices"
	"strings"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/agent/tools"
)

// DefaultMaxIterations bounds the tool rounds of one turn when the caller
// does not.
const DefaultMaxIterations = 4

// StopMaxIterations is the TurnResult.StopReason of a turn that hit the
// tool-round bound.
const StopMaxIterations = "max_iterations"

// ToolLimitInstruction is added to the system prompt of the closing call
// of a turn that used all its tool rounds.
const ToolLimitInstruction = "\n\n## Tool limit reached\nYou cannot call any more tools for this message. Answer the visitor now with what you already know; if something could not be done, say so plainly."

// ToolLimitMessage is said to the visitor when the closing call of a turn
// that hit the bound produced no text.
const ToolLimitMessage = "Sorry, I could not finish that just now. Could you tell me again what you need, or rephrase it?"

// TurnResult is what one visitor message produced.
type TurnResult struct {
	// Text is everything emitted to the visitor, in order: the text of every
	// model call, separated by a blank line, and ToolLimitMessage if used.
	Text string
	// Executions are the tool calls executed, in order.
	Executions []tools.Execution
	// Messages are the messages the turn added to the conversation after
	// the request's: assistant tool-call messages and tool results (not the
	// final answer, which is Text).
	Messages []llm.Message
	// StopReason is the last model call's (StopEnd, StopLength) or
	// StopMaxIterations.
	StopReason string
	// Calls counts the model calls; Usage sums theirs.
	Calls int
	Usage llm.Usage
	// Cited are the refs of the passages the answer cited (llm.Passage.Ref),
	// in order of first citation; their markers are not in Text.
	Cited []int
}

// RunTurn answers one visitor message: it streams the model's text through
// emit as it arrives, executes the tools the model calls (in order, one
// after the other), feeds their results back and calls the model again,
// for at most maxIterations tool rounds (<= 0: DefaultMaxIterations).
//
// On reaching the bound it makes one closing call: the tools are still
// declared (some providers refuse a conversation holding tool calls
// without them) but the system prompt gets ToolLimitInstruction, and any
// tool call in that answer is ignored, not executed. When the closing call
// says nothing, ToolLimitMessage is emitted. So a turn makes at most
// maxIterations+1 model calls.
//
// req.Tools is replaced by the registry's specs (none when registry is
// nil). A failed model call returns the result so far, with the text
// already emitted, and the provider's error (an *llm.Error, or the context's
// error when the caller went away): the caller can store what was said.
func RunTurn(ctx context.Context, provider llm.Provider, req llm.Request, registry *tools.Registry, maxIterations int, emit func(llm.Event)) (TurnResult, error) {
	if maxIterations <= 0 {
		maxIterations = DefaultMaxIterations
	}
	if emit == nil {
		emit = func(llm.Event) {}
	}
	req.Tools = registry.Specs()
	req.Messages = append([]llm.Message(nil), req.Messages...)
	var res TurnResult
	var text strings.Builder
	cite := newCiteFilter(passageRefs(req.Passages))
	out := func(s string, more bool) {
		if s == "" {
			return
		}
		emit(llm.Event{Kind: llm.EventText, Text: s, More: more})
		text.WriteString(s)
	}
	say := func(s string, more bool) { out(cite.write(s), more) }
	// flush ends a model call's text: what the filter held back is text.
	flush := func() {
		out(cite.flush(), false)
		res.Cited = cite.refs()
	}
	for round := 0; ; round++ {
		closing := round == maxIterations
		call := req
		if closing {
			call.System += ToolLimitInstruction
		}
		// A blank line between the texts of successive calls, emitted with
		// the first text of the next one.
		sep := ""
		if t := text.String(); t != "" && !strings.HasSuffix(t, "\n") {
			sep = "\n\n"
		}
		var roundText strings.Builder
		var calls []llm.ToolCall
		stop := ""
		stream, err := provider.Stream(ctx, call)
		res.Calls++
		if err == nil {
			for ev, serr := range stream {
				if serr != nil {
					err = serr
					break
				}
				switch ev.Kind {
				case llm.EventText:
					if ev.Text == "" {
						continue
					}
					if roundText.Len() == 0 {
						say(sep, true)
					}
					roundText.WriteString(ev.Text)
					say(ev.Text, ev.More)
				case llm.EventToolCall:
					calls = append(calls, ev.ToolCall)
				case llm.EventDone:
					stop = ev.StopReason
					res.Usage.InputTokens += ev.Usage.InputTokens
					res.Usage.OutputTokens += ev.Usage.OutputTokens
				}
			}
		}
		flush()
		if err != nil {
			res.Text = text.String()
			res.StopReason = stop
			return res, err
		}
		if closing {
			if roundText.Len() == 0 {
				say(sep, true)
				say(ToolLimitMessage, false)
				flush()
			}
			res.Text, res.StopReason = text.String(), StopMaxIterations
			return res, nil
		}
		if len(calls) == 0 || registry == nil {
			res.Text, res.StopReason = text.String(), stop
			if res.StopReason == "" || res.StopReason == llm.StopToolCalls {
				res.StopReason = llm.StopEnd
			}
			return res, nil
		}
		added := []llm.Message{{Role: llm.RoleAssistant, Content: roundText.String(), ToolCalls: calls}}
		for _, c := range calls {
			ex := registry.Execute(ctx, c)
			res.Executions = append(res.Executions, ex)
			added = append(added, llm.Message{Role: llm.RoleTool, Content: ex.ToolMessage(), ToolCallID: c.ID})
		}
		req.Messages = append(req.Messages, added...)
		res.Messages = append(res.Messages, added...)
		if final := finalWords(res.Executions[len(res.Executions)-len(calls):]); final != "" {
			if t := text.String(); t != "" && !strings.HasSuffix(t, "\n") {
				say("\n\n", true)
			}
			say(final, false)
			flush()
			res.Text, res.StopReason = text.String(), llm.StopEnd
			return res, nil
		}
	}
}

// finalWords are the words a round's tools end the turn with (Final), ""
// when they leave it to the model.
func finalWords(round []tools.Execution) string {
	var words []string
	for _, ex := range round {
		if ex.Final != "" && !slices.Contains(words, ex.Final) {
			words = append(words, ex.Final)
		}
	}
	return strings.Join(words, "\n\n")
}

// ContactSubmitted says a SUBMIT_FORM tool succeeded during the turn (the
// envelope's contactSubmitted).
func (r TurnResult) ContactSubmitted() bool {
	for _, e := range r.Executions {
		if e.ToolType == parley.ToolSubmitForm && e.Success {
			return true
		}
	}
	return false
}

// Escalated says ESCALATE_TO_HUMAN fired: the conversation's status
// becomes escalated.
func (r TurnResult) Escalated() bool {
	for _, e := range r.Executions {
		if e.Escalated {
			return true
		}
	}
	return false
}

// ToolResults maps each executed tool's name to whether it succeeded (the
// envelope's toolResults); a tool called more than once reports its last
// execution.
func (r TurnResult) ToolResults() map[string]bool {
	m := map[string]bool{}
	for _, e := range r.Executions {
		m[e.ToolName] = e.Success
	}
	return m
}

// ToolExecutions is the envelope's toolExecutions array.
func (r TurnResult) ToolExecutions() []tools.ExecutionEnvelope {
	out := make([]tools.ExecutionEnvelope, len(r.Executions))
	for i, e := range r.Executions {
		out[i] = e.Envelope()
	}
	return out
}

// passageRefs says which refs the answer may cite: those of the passages
// the prompt numbered; nil when it numbered none.
func passageRefs(passages []llm.Passage) func(int) bool {
	refs := map[int]bool{}
	for _, p := range passages {
		if p.Ref > 0 {
			refs[p.Ref] = true
		}
	}
	if len(refs) == 0 {
		return nil
	}
	return func(ref int) bool { return refs[ref] }
}
