package manage_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/db/webhooks"
	"github.com/parley/parley/manage"
)

// CheckWebhook: the endpoint's rules at their limits and one past, bad
// URLs and events, and the problems read by the surface first.
func TestCheckWebhook(t *testing.T) {
	t.Parallel()
	const hook = "https://hooks.example.com/parley"
	long := func(n int) string { return hook + "?q=" + strings.Repeat("x", n-len(hook)-3) }
	fields := func(n int) parley.Opt[[]string] {
		f := make([]string, n)
		for i := range f {
			f[i] = "field" + strings.Repeat("x", i)
		}
		return parley.Some(f)
	}
	for name, c := range map[string]struct {
		in      parley.WebhookInput
		field   string
		problem string
	}{
		"URLAtLimit":          {parley.WebhookInput{URL: parley.Some(long(parley.MaxWebhookURL))}, "", ""},
		"URLPastLimit":        {parley.WebhookInput{URL: parley.Some(long(parley.MaxWebhookURL + 1))}, "url", "must be at most 2000 characters"},
		"NoURL":               {parley.WebhookInput{}, "url", "is required"},
		"BlankURL":            {parley.WebhookInput{URL: parley.Some("  ")}, "url", "is required"},
		"NotAURL":             {parley.WebhookInput{URL: parley.Some("hooks.example.com")}, "url", "must be an absolute https URL"},
		"OtherScheme":         {parley.WebhookInput{URL: parley.Some("ftp://hooks.example.com/x")}, "url", "must be an absolute https URL"},
		"Credentials":         {parley.WebhookInput{URL: parley.Some("https://u:p@hooks.example.com/x")}, "url", "must not contain credentials"},
		"Fragment":            {parley.WebhookInput{URL: parley.Some(hook + "#top")}, "url", "must not contain a fragment"},
		"DescriptionAtLimit":  {parley.WebhookInput{URL: parley.Some(hook), Description: parley.Some(strings.Repeat("é", parley.MaxWebhookDescription))}, "", ""},
		"DescriptionPast":     {parley.WebhookInput{URL: parley.Some(hook), Description: parley.Some(strings.Repeat("é", parley.MaxWebhookDescription+1))}, "description", "must be at most 500 characters"},
		"UnknownEvent":        {parley.WebhookInput{URL: parley.Some(hook), Events: parley.Some([]string{"submission.created", "lead.won"})}, "events", `unknown event "lead.won"; events are submission.created, submission.updated, conversation.escalated, conversation.taken, conversation.handed_back, conversation.closed, message.created`},
		"NoEvents":            {parley.WebhookInput{URL: parley.Some(hook), Events: parley.Some([]string{})}, "events", "must list at least one of submission.created, submission.updated"},
		"CreatedDisabled":     {parley.WebhookInput{URL: parley.Some(hook), Enabled: parley.Some(false)}, "enabled", "endpoints are created enabled"},
		"PIIFieldsAtLimit":    {parley.WebhookInput{URL: parley.Some(hook), PIIFields: fields(parley.MaxWebhookPIIFields)}, "", ""},
		"PIIFieldsPastLimit":  {parley.WebhookInput{URL: parley.Some(hook), PIIFields: fields(parley.MaxWebhookPIIFields + 1)}, "piiFields", "must list at most 32 fields"},
		"PIIFieldNameAtLimit": {parley.WebhookInput{URL: parley.Some(hook), PIIFields: parley.Some([]string{strings.Repeat("n", parley.MaxPIIFieldName)})}, "", ""},
		"PIIFieldNamePast":    {parley.WebhookInput{URL: parley.Some(hook), PIIFields: parley.Some([]string{strings.Repeat("n", parley.MaxPIIFieldName+1)})}, "piiFields", "each field name must be 1 to 100 characters"},
		"ReadProblem":         {parley.WebhookInput{URL: parley.Some("nope"), Problems: parley.FieldErrors{"url": "must be a string"}}, "url", "must be a string"},
	} {
		_, errs := manage.CheckWebhook(c.in, true, nil)
		if c.field == "" {
			if len(errs) != 0 {
				t.Errorf("%s: %v", name, errs)
			}
			continue
		}
		if !strings.HasPrefix(errs[c.field], c.problem) {
			t.Errorf("%s: %s is %q, want %q (all: %v)", name, c.field, errs[c.field], c.problem, errs)
		}
	}

	t.Run("CreateDefaults", func(t *testing.T) {
		t.Parallel()
		w, errs := manage.CheckWebhook(parley.WebhookInput{URL: parley.Some(" " + hook + " "), Enabled: parley.Some(true),
			PIIFields: parley.Some([]string{" email ", "email", "phone"})}, true, nil)
		if len(errs) != 0 {
			t.Fatal(errs)
		}
		if w.URL.Value != hook || !w.Description.Set || w.Description.Value != "" || w.Enabled.Set {
			t.Errorf("write: %+v", w)
		}
		if !slices.Equal(w.Events.Value, parley.WebhookEvents) || !slices.Equal(w.PIIFields.Value, []string{"email", "phone"}) {
			t.Errorf("events %v, PII fields %v", w.Events.Value, w.PIIFields.Value)
		}
	})

	t.Run("Update", func(t *testing.T) {
		t.Parallel()
		// Nothing is required; enabled may be false but not null.
		w, errs := manage.CheckWebhook(parley.WebhookInput{Enabled: parley.Some(false)}, false, nil)
		if len(errs) != 0 || w.URL.Set || w.Events.Set || w.Description.Set || !w.Enabled.Set || w.Enabled.Value {
			t.Errorf("partial update: %+v, %v", w, errs)
		}
		if _, errs := manage.CheckWebhook(parley.WebhookInput{Enabled: parley.Opt[bool]{Set: true, Null: true}}, false, nil); errs["enabled"] != "must be true or false" {
			t.Errorf("null enabled: %v", errs)
		}
		if _, errs := manage.CheckWebhook(parley.WebhookInput{URL: parley.Opt[string]{Set: true, Null: true}}, false, nil); errs["url"] != "is required" {
			t.Errorf("null url: %v", errs)
		}
	})

	t.Run("Address", func(t *testing.T) {
		t.Parallel()
		// The address check sees only a URL the rules let through, and not
		// one the surface could not read.
		var asked []string
		address := func(rawURL string) string {
			asked = append(asked, rawURL)
			return "refused: hooks.example.com is not a public internet address"
		}
		for _, in := range []parley.WebhookInput{
			{URL: parley.Some("https://u:p@hooks.example.com/x")},
			{URL: parley.Some(hook), Problems: parley.FieldErrors{"url": "must be a string"}},
		} {
			if _, errs := manage.CheckWebhook(in, true, address); errs["url"] == "" || strings.HasPrefix(errs["url"], "refused") {
				t.Errorf("%v: %v", in.URL, errs)
			}
		}
		if _, errs := manage.CheckWebhook(parley.WebhookInput{URL: parley.Some(hook)}, true, address); !strings.HasPrefix(errs["url"], "refused") {
			t.Errorf("address problem: %v", errs)
		}
		if !slices.Equal(asked, []string{hook}) {
			t.Errorf("address asked about %v", asked)
		}
	})

	t.Run("EventsInStep", func(t *testing.T) {
		t.Parallel()
		if want := []string{webhooks.EventSubmissionCreated, webhooks.EventSubmissionUpdated,
			webhooks.EventConversationEscalated, webhooks.EventConversationTaken, webhooks.EventConversationHandedBack,
			webhooks.EventConversationClosed, webhooks.EventMessageCreated}; !slices.Equal(parley.WebhookEvents, want) {
			t.Errorf("parley.WebhookEvents %v, the store's events %v", parley.WebhookEvents, want)
		}
	})
}

// addresses vets as the outbound guard would: exempt hosts may use plain
// http; problem is every other address's problem, when asked that the host
// resolve (a webhook's must: events go to it at once).
type addresses struct {
	exempt  string
	problem string
}

func (a addresses) Problem(_ context.Context, _ string, mustResolve bool) string {
	if !mustResolve {
		return "asked without mustResolve"
	}
	return a.problem
}

func (a addresses) PlainHTTP(_ context.Context, rawURL string) bool {
	return strings.Contains(rawURL, "://"+a.exempt+"/")
}

// The operations vet a webhook's URL with the Addresses before any write:
// plain http only to an exempted host, then the host's addresses.
func TestWebhookAddresses(t *testing.T) {
	t.Parallel()
	refused := "refused: inside.test is not a public internet address"
	s := &manage.Service{Addresses: addresses{exempt: "127.0.0.1", problem: refused}}
	for name, c := range map[string]struct {
		url, problem string
	}{
		"PlainHTTP":       {"http://hooks.example.com/x", "must use https"},
		"PlainHTTPExempt": {"http://127.0.0.1/x", refused}, // past the https rule: the address is asked
		"Refused":         {"https://inside.test/x", refused},
	} {
		_, _, err := s.CreateWebhook(context.Background(), "tenant", parley.WebhookInput{URL: parley.Some(c.url)})
		if got := urlProblem(err); got != c.problem {
			t.Errorf("%s: create: url %q, want %q (%v)", name, got, c.problem, err)
		}
		_, err = s.UpdateWebhook(context.Background(), "tenant", "id", parley.WebhookInput{URL: parley.Some(c.url)})
		if got := urlProblem(err); got != c.problem {
			t.Errorf("%s: update: url %q, want %q (%v)", name, got, c.problem, err)
		}
	}
}

// urlProblem is the url field's problem in err, a validation error.
func urlProblem(err error) string {
	var pe *parley.Error
	if !errors.As(err, &pe) {
		return ""
	}
	d, _ := pe.Details.(map[string]string)
	return d["url"]
}
