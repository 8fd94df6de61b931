package tools

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/agent/tools/toolstest"
)

// TestExtraTools: a caller's tools are offered after the registry's own,
// one whose name is taken is left out, and a run's outcome is told to the
// model: the result, our error's message, or a failure in general terms.
func TestExtraTools(t *testing.T) {
	var got json.RawMessage
	run := func(res any, err error) func(context.Context, json.RawMessage) (any, error) {
		return func(_ context.Context, args json.RawMessage) (any, error) { got = args; return res, err }
	}
	boom := errors.New("connection refused")
	reg := NewRegistry([]parley.Tool{toolstest.ContactForm(t)}, Deps{})
	reg.AddExtra([]Extra{
		{Name: "admin_ok", Type: parley.AdminToolType, Parameters: json.RawMessage(`{"type":"object"}`), Run: run(map[string]any{"id": "c1"}, nil)},
		{Name: "admin_refused", Type: parley.AdminToolType, Run: run(nil, parley.Errorf(parley.KindInvalid, "title is required"))},
		{Name: "admin_broken", Type: parley.AdminToolType, Run: run(nil, boom)},
		{Name: "contact_form", Type: parley.AdminToolType, Run: run(nil, nil)},
	})
	var names []string
	for _, s := range reg.Specs() {
		names = append(names, s.Name)
	}
	if want := []string{"contact_form", "admin_ok", "admin_refused", "admin_broken"}; !slices.Equal(names, want) {
		t.Errorf("offered %v, want %v", names, want)
	}
	if len(reg.Skipped) != 1 || reg.Skipped[0] != "contact_form: the name is taken" {
		t.Errorf("skipped %v", reg.Skipped)
	}

	ex := reg.Execute(t.Context(), llm.ToolCall{ID: "1", Name: "admin_ok", Arguments: []byte(`{"title":"x"}`)})
	if !ex.Success || ex.ToolType != parley.AdminToolType || ex.ToolName != "admin_ok" || ex.Result["id"] != "c1" || string(got) != `{"title":"x"}` {
		t.Errorf("ok: %+v (args %s)", ex, got)
	}
	ex = reg.Execute(t.Context(), llm.ToolCall{ID: "2", Name: "admin_refused"})
	if ex.Success || ex.Summary != "title is required" || ex.Err != nil || string(got) != "{}" {
		t.Errorf("refused: %+v (args %s)", ex, got)
	}
	ex = reg.Execute(t.Context(), llm.ToolCall{ID: "3", Name: "admin_broken", Arguments: []byte(`{}`)})
	if ex.Success || ex.Summary != "The tool failed; try again later." || !errors.Is(ex.Err, boom) {
		t.Errorf("broken: %+v", ex)
	}
}
