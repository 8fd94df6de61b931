package agent

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/tools"
)

// FormOfferType is the tool type of offer_contact_form's runs (tool
// history, the chat's toolExecutions): the widget shows the segment's lead
// form below the answer of a turn that ran it successfully.
const FormOfferType = "SHOW_FORM"

// formOffer is the tool through which the assistant offers the segment's
// lead form in the chat widget (and the dashboard's test chat, which is the
// widget), when the segment shows the form only when asked
// (parley.FormWhenAsked): what "the assistant asks" means, concretely. It
// does nothing on the server; the widget reads its run in the answer's
// toolExecutions. None for another display or a form that is off.
func formOffer(seg parley.Segment) []tools.Extra {
	f := seg.FormConfig
	if f == nil || !f.Enabled || len(f.Fields) == 0 || f.Display != parley.FormWhenAsked {
		return nil
	}
	what := "to be contacted"
	if i := strings.TrimSpace(f.Intent); i != "" {
		what = i
	}
	return []tools.Extra{{
		Name: "offer_contact_form", Type: FormOfferType, DisplayName: "Offered the contact form",
		Description: "Shows the visitor the contact form below your answer. Use it when the visitor wants " + what +
			" or to leave their details for the team; then invite them to fill it in, and do not ask for those details in the chat.",
		Parameters: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		Run: func(context.Context, json.RawMessage) (any, error) {
			return map[string]any{"shown": true,
				"note": "The form now shows below your answer. Tell the visitor they can fill it in there."}, nil
		},
	}}
}
