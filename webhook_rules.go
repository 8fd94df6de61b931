package parley

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// A webhook endpoint's limits, chosen here and documented in the OpenAPI
// document.
const (
	MaxWebhookURL         = 2000 // bytes
	MaxWebhookDescription = 500
	MaxWebhookPIIFields   = 32
	MaxPIIFieldName       = 100
)

// WebhookEvents are the events an endpoint may subscribe to, under the
// names the store records them with (the Event constants of db/webhooks: a
// test of manage holds them the same): a submission's, and a
// conversation's takeover (waiting for a person, taken by one, handed back
// to the assistant, closed, and the messages a person reads or writes).
var WebhookEvents = []string{"submission.created", "submission.updated",
	"conversation.escalated", "conversation.taken", "conversation.handed_back", "conversation.closed", "message.created"}

// WebhookInput is a write of a webhook endpoint as a caller gives it,
// through any surface (its JSON is the REST API's): the fields set change.
// Problems holds what the surface could not read of it, reported first.
type WebhookInput struct {
	URL         Opt[string]   `json:"url"`
	Description Opt[string]   `json:"description"`
	Events      Opt[[]string] `json:"events"`
	Enabled     Opt[bool]     `json:"enabled"`
	PIIFields   Opt[[]string] `json:"piiFields"`
	Problems    FieldErrors   `json:"-"`
}

// Check normalises in (URL, description and PII field names trimmed,
// events and PII fields deduplicated) and returns its problems, Problems
// first; a field with a problem of reading is not checked again. Creating,
// the URL is required, the description defaults to "" and the events to
// every event, and Enabled is refused unless true (endpoints are created
// enabled) then dropped. address, when not nil, says why Parley must not
// send to a URL that passes the rules ("" when it may).
func (in *WebhookInput) Check(creating bool, address func(rawURL string) string) FieldErrors {
	errs := in.Problems.Copy()
	if _, bad := errs["url"]; !bad {
		switch {
		case !in.URL.Set && creating, in.URL.Set && (in.URL.Null || strings.TrimSpace(in.URL.Value) == ""):
			errs.Add("url", "is required")
		case in.URL.Set:
			in.URL = Some(strings.TrimSpace(in.URL.Value))
			if msg := webhookURLProblem(in.URL.Value); msg != "" {
				errs.Add("url", msg)
			} else if address != nil {
				if msg := address(in.URL.Value); msg != "" {
					errs.Add("url", msg)
				}
			}
		}
	}
	if _, bad := errs["description"]; !bad && in.Description.Set {
		in.Description = Some(strings.TrimSpace(in.Description.Value))
		CheckLen(errs, "description", in.Description, MaxWebhookDescription)
	} else if creating {
		in.Description = Some("")
	}
	if _, bad := errs["events"]; !bad {
		switch {
		case !in.Events.Set && creating:
			in.Events = Some(slices.Clone(WebhookEvents)) // every event
		case in.Events.Set && (in.Events.Null || len(in.Events.Value) == 0):
			errs.Add("events", "must list at least one of "+strings.Join(WebhookEvents, ", "))
		case in.Events.Set:
			var events []string
			for _, e := range in.Events.Value {
				if !slices.Contains(WebhookEvents, e) {
					errs.Add("events", "unknown event "+quoteShort(e)+"; events are "+strings.Join(WebhookEvents, ", "))
					break
				}
				if !slices.Contains(events, e) {
					events = append(events, e)
				}
			}
			in.Events = Some(events)
		}
	}
	if _, bad := errs["enabled"]; !bad && in.Enabled.Set {
		switch {
		case creating && (!in.Enabled.Value || in.Enabled.Null):
			// A false here would be ignored, so say so.
			errs.Add("enabled", "endpoints are created enabled; disable one with PATCH")
		case !creating && in.Enabled.Null:
			errs.Add("enabled", "must be true or false")
		}
	}
	if creating {
		in.Enabled = Opt[bool]{}
	}
	if _, bad := errs["piiFields"]; !bad && in.PIIFields.Set {
		fields := []string{}
		if len(in.PIIFields.Value) > MaxWebhookPIIFields {
			errs.Add("piiFields", fmt.Sprintf("must list at most %d fields", MaxWebhookPIIFields))
		}
		for _, f := range in.PIIFields.Value {
			f = strings.TrimSpace(f)
			if f == "" || utf8.RuneCountInString(f) > MaxPIIFieldName {
				errs.Add("piiFields", fmt.Sprintf("each field name must be 1 to %d characters", MaxPIIFieldName))
				break
			}
			if !slices.Contains(fields, f) {
				fields = append(fields, f)
			}
		}
		in.PIIFields = Some(fields)
	}
	return errs
}

// webhookURLProblem returns why raw cannot receive webhooks whatever its
// host, or "": it must be an absolute http(s) URL without credentials or
// fragment. Plain http and the host's addresses are the caller's address
// check to vet.
func webhookURLProblem(raw string) string {
	if len(raw) > MaxWebhookURL {
		return TooLong(MaxWebhookURL)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "must be an absolute https URL"
	}
	if u.User != nil {
		return "must not contain credentials; authenticate deliveries with the signing secret"
	}
	if u.Fragment != "" {
		return "must not contain a fragment"
	}
	return ""
}

// quoteShort quotes s for a message, cut to 60 characters.
func quoteShort(s string) string {
	if utf8.RuneCountInString(s) > 60 {
		s = string([]rune(s)[:60]) + "…"
	}
	return `"` + s + `"`
}

// The deliveries log of an endpoint, as the REST API and the dashboard list
// it: the page's default size, and how far back the endpoint's statistics
// reach.
const (
	DefaultDeliveriesPage = 30
	DeliveryStatsWindow   = 7 * 24 * time.Hour
)
