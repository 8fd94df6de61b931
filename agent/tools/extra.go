package tools

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm"
)

// Extra is a tool a caller adds to one turn besides the tenant's: the
// management tools of Parley's MCP server that an admin token allows. The
// agent package knows nothing of them but this.
type Extra struct {
	// Name is the function name the model sees; Type names the tool in the
	// tool history (parley.AdminToolType).
	Name, Type string
	// DisplayName is the tool history's display name of its runs
	// (Execution.DisplayName), "" for none.
	DisplayName string
	Description string
	// Parameters is the JSON Schema of its arguments.
	Parameters json.RawMessage
	// Run does the work with the model's arguments (a JSON object) and
	// returns what the model is told. A *parley.Error or a *Failure is
	// the model's to relay; any other error is a failure it is told about in
	// general terms.
	Run func(ctx context.Context, args json.RawMessage) (any, error)
}

// Failure is an extra tool's failure: Summary is what the model is told
// (and the tool history keeps), Result what it is given besides, Cause the
// underlying error for the logs.
type Failure struct {
	Summary string
	Result  map[string]any
	Cause   error
}

func (f *Failure) Error() string { return f.Summary }

// AddExtra offers tools after the registry's own, in order. One whose name
// is taken is left out and listed in Skipped.
func (r *Registry) AddExtra(tools []Extra) {
	for i := range tools {
		x := &tools[i]
		if _, taken := r.byName[x.Name]; taken {
			r.Skipped = append(r.Skipped, x.Name+": the name is taken")
			continue
		}
		rt := &registeredTool{tool: parley.Tool{Name: x.Name, Type: x.Type}, extra: x,
			spec: llm.ToolSpec{Name: x.Name, Description: x.Description, Parameters: x.Parameters}}
		r.tools = append(r.tools, rt)
		r.byName[x.Name] = rt
	}
}

// runExtra runs an extra tool and tells the model what came of it.
func runExtra(ctx context.Context, x *Extra, args json.RawMessage, ex *Execution) {
	res, err := x.Run(ctx, args)
	var pe *parley.Error
	var tf *Failure
	switch {
	case errors.As(err, &tf):
		ex.Summary, ex.Result, ex.Err = tf.Summary, tf.Result, tf.Cause
		return
	case errors.As(err, &pe):
		ex.Summary = pe.Message
		if pe.Details != nil {
			ex.Result = map[string]any{"details": pe.Details}
		}
		return
	case err != nil:
		ex.Summary, ex.Err = "The tool failed; try again later.", err
		return
	}
	b, err := json.Marshal(res)
	if err == nil {
		err = json.Unmarshal(b, &ex.Result)
	}
	if err != nil {
		ex.Summary, ex.Err = "The tool's result could not be encoded.", err
		return
	}
	ex.Success, ex.Summary = true, x.Name+" done."
}
