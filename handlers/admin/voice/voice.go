// Package voice is the dashboard's Voice page (/admin/voice): calls on or
// off, the voice and its words, the orchestrator's managed setup or the
// link of the tenant's own assistant, and the recent calls with their
// recordings. The conversation page shows a call through CallRow.
package voice

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/handlers/resource"
	"github.com/parley/parley/views"
)

// Voice is the dashboard's Voice area.
type Voice struct{ *handlers.Base }

// New builds the Voice area over the Base web builds.
func New(b *handlers.Base) *Voice { return &Voice{b} }

// sessVoiceSecret holds the orchestrator's secret between a setup and the
// page that shows it once.
const sessVoiceSecret = "voiceSecret"

// recentVoiceCalls is how many calls the Voice page lists.
const recentVoiceCalls = 20

// voiceForm fills the page's model from the tenant; the forms' typed
// values are the tenant's own until a refused save re-renders them.
func (h *Voice) voiceForm(c echo.Context, t parley.Tenant) (views.VoiceForm, error) {
	llm, server := handlers.VoiceURLs(h.BaseURL, t.Slug)
	f := views.VoiceForm{Plan: t.Plan, Available: t.PlanInfo().Voice, Managed: h.Vapi.Configured(),
		Enabled: t.VoiceEnabled, AssistantID: handlers.Deref(t.VoiceAssistantID), PhoneNumber: handlers.Deref(t.VoicePhoneNumber),
		SecretSet: t.VoiceSecret != nil, CustomLLM: llm, ServerURL: server,
		VoiceID: t.VoiceConfig.VoiceID, Language: t.VoiceConfig.Language, FirstMessage: t.VoiceConfig.FirstMessage,
		EndPhrases:      strings.Join(t.VoiceConfig.EndCallPhrases, "\n"),
		LinkAssistantID: handlers.Deref(t.VoiceAssistantID), LinkPhoneNumber: handlers.Deref(t.VoicePhoneNumber), LinkLanguage: t.VoiceConfig.Language}
	if t.VoiceConfig.MaxCallDuration > 0 {
		f.MaxDuration = strconv.Itoa(t.VoiceConfig.MaxCallDuration)
	}
	if !f.Available {
		return f, nil
	}
	calls, err := h.Manage.RecentVoiceCalls(c.Request().Context(), t.ID, recentVoiceCalls)
	if err != nil {
		return f, err
	}
	loc := resource.TenantLocation(t)
	for _, call := range calls {
		f.Calls = append(f.Calls, CallRow(call, loc))
	}
	return f, nil
}

// voiceEndings are the orchestrator's (Vapi's) commonest ended reasons in
// the owner's words.
var voiceEndings = map[string]string{
	"customer-ended-call":                       "The caller hung up",
	"assistant-ended-call":                      "The assistant ended the call",
	"assistant-said-end-call-phrase":            "The assistant said goodbye and hung up",
	"assistant-ended-call-after-message-spoken": "The assistant said goodbye and hung up",
	"assistant-forwarded-call":                  "The assistant forwarded the call",
	"silence-timed-out":                         "The line stayed silent too long",
	"exceeded-max-duration":                     "The call reached its longest allowed duration",
	"customer-did-not-answer":                   "Nobody answered",
	"customer-busy":                             "The line was busy",
	"voicemail":                                 "The call reached a voicemail",
	"manually-canceled":                         "The call was cancelled",
}

// voiceEnding says how a call ended, from the orchestrator's ended reason:
// its words when known, else the reason's own words, a failure said so.
func voiceEnding(reason string) string {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return ""
	}
	if words, ok := voiceEndings[reason]; ok {
		return words
	}
	words := strings.NewReplacer("-", " ", ".", " ", "_", " ").Replace(reason)
	if strings.Contains(reason, "error") || strings.Contains(reason, "failed") {
		return "The call failed (" + words + ")"
	}
	return "Ended: " + words
}

// voiceCost is what the orchestrator charged for a call, in US dollars
// (Vapi's unit); "" when not known.
func voiceCost(cost *float64) string {
	switch {
	case cost == nil || *cost < 0:
		return ""
	case *cost > 0 && *cost < 0.005:
		return "less than $0.01"
	}
	return fmt.Sprintf("$%.2f", *cost)
}

// voiceCallRow is a call in the owner's words.
func CallRow(call db.VoiceCallRow, loc *time.Location) views.VoiceCallRow {
	when := call.CreatedAt
	if call.StartedAt != nil {
		when = *call.StartedAt
	}
	row := views.VoiceCallRow{CallID: call.CallID, When: when.In(loc).Format("2 Jan 2006, 15:04"),
		Caller: "Unknown caller", Duration: "in progress", EndedReason: voiceEnding(handlers.Deref(call.EndedReason)), Cost: voiceCost(call.Cost),
		Summary: handlers.Deref(call.Summary), Transcript: handlers.Deref(call.Transcript), HasRecording: call.HasRecording}
	if call.CallerNumber != nil && *call.CallerNumber != "" {
		row.Caller = *call.CallerNumber
	}
	if call.DurationSeconds != nil {
		s := int(math.Round(*call.DurationSeconds))
		row.Duration = fmt.Sprintf("%d min %02d s", s/60, s%60)
	} else if call.EndedAt != nil {
		row.Duration = "ended"
	}
	if call.ConversationID != nil {
		row.Conversation = "/admin/conversations/" + url.PathEscape(*call.ConversationID)
	}
	return row
}

func (h *Voice) renderVoice(c echo.Context, status int, f views.VoiceForm) error {
	return handlers.Render(c, status, views.VoicePage(dash.Page(c, h.Sessions, "Voice", "voice"), f))
}

// ShowVoicePage renders the voice settings, or what the plan lacks.
func (h *Voice) ShowVoicePage(c echo.Context) error {
	f, err := h.voiceForm(c, dash.AdminFrom(c).Tenant)
	if err != nil {
		return err
	}
	f.NewSecret = h.Sessions.PopString(c.Request().Context(), sessVoiceSecret)
	return h.renderVoice(c, http.StatusOK, f)
}

// refusedVoiceForm re-renders the page with the errors of one of its forms,
// keeping what was typed (apply sets the typed values).
func (h *Voice) refusedVoiceForm(c echo.Context, t parley.Tenant, form string, err error, apply func(*views.VoiceForm)) error {
	e, ok := err.(*parley.Error)
	fe, isFields := parley.FieldErrors(nil), false
	if ok {
		var m map[string]string
		m, isFields = e.Details.(map[string]string)
		fe = m
	}
	if !ok || e.Kind != parley.KindInvalid || !isFields {
		// An error of the orchestrator or of the plan: a message on the page.
		if ok && e.Kind != parley.KindInternal {
			h.Sessions.Put(c.Request().Context(), dash.SessFlashError, e.Message)
			return c.Redirect(http.StatusSeeOther, "/admin/voice")
		}
		return err
	}
	f, ferr := h.voiceForm(c, t)
	if ferr != nil {
		return ferr
	}
	apply(&f)
	f.Form, f.Errors = form, views.Errors(fe)
	return h.renderVoice(c, http.StatusUnprocessableEntity, f)
}

// SaveVoiceSettings saves how the assistant speaks and whether calls are answered.
func (h *Voice) SaveVoiceSettings(c echo.Context) error {
	t, form, err := voiceForm(c)
	if err != nil {
		return err
	}
	typed := func(f *views.VoiceForm) {
		f.Enabled = form.Get("voiceEnabled") == "true"
		f.VoiceID, f.Language, f.FirstMessage = form.Get("voiceId"), form.Get("language"), form.Get("firstMessage")
		f.EndPhrases, f.MaxDuration = form.Get("endCallPhrases"), form.Get("maxCallDuration")
	}
	errs := parley.FieldErrors{}
	cfg := parley.VoiceConfig{VoiceID: form.Get("voiceId"), Language: form.Get("language"), FirstMessage: form.Get("firstMessage")}
	for _, line := range strings.Split(form.Get("endCallPhrases"), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			cfg.EndCallPhrases = append(cfg.EndCallPhrases, line)
		}
	}
	if d := strings.TrimSpace(form.Get("maxCallDuration")); d != "" {
		if n, err := strconv.Atoi(d); err != nil {
			errs.Add("maxCallDuration", "must be a whole number of seconds")
		} else {
			cfg.MaxCallDuration = n
		}
	}
	parley.CheckVoiceConfig(errs, "", &cfg)
	if err := errs.Err(); err != nil {
		return h.refusedVoiceForm(c, t, "settings", err, typed)
	}
	in := parley.TenantInput{VoiceEnabled: parley.Some(form.Get("voiceEnabled") == "true"), VoiceConfig: parley.Some(cfg)}
	if _, err := h.Manage.UpdateTenant(c.Request().Context(), t, in); err != nil {
		return h.refusedVoiceForm(c, t, "settings", err, typed)
	}
	h.Sessions.Put(c.Request().Context(), dash.SessFlash, "Voice settings saved.")
	return c.Redirect(http.StatusSeeOther, "/admin/voice")
}

// SaveManagedVoiceSetup runs the managed setup with the saved voice settings.
func (h *Voice) SaveManagedVoiceSetup(c echo.Context) error {
	t, form, err := voiceForm(c)
	if err != nil {
		return err
	}
	if !h.Vapi.Configured() {
		return handlers.ManagedSetupUnavailable
	}
	typed := func(f *views.VoiceForm) {
		f.BuyNumber, f.AreaCode = form.Get("buyNumber") == "true", form.Get("numberAreaCode")
	}
	in := parley.VoiceSetupInput{BuyNumber: parley.Some(form.Get("buyNumber") == "true"), NumberAreaCode: parley.Some(form.Get("numberAreaCode"))}
	_, secret, err := h.Manage.SetUpVoice(c.Request().Context(), t, in, h.VoiceOrchestrator())
	if err != nil {
		return h.refusedVoiceForm(c, t, "setup", err, typed)
	}
	ctx := c.Request().Context()
	h.Sessions.Put(ctx, sessVoiceSecret, secret)
	h.Sessions.Put(ctx, dash.SessFlash, "The phone line is set up: calls are answered.")
	return c.Redirect(http.StatusSeeOther, "/admin/voice")
}

// SaveVoiceLink links the owner's own assistant.
func (h *Voice) SaveVoiceLink(c echo.Context) error {
	t, form, err := voiceForm(c)
	if err != nil {
		return err
	}
	typed := func(f *views.VoiceForm) {
		f.LinkAssistantID, f.LinkPhoneNumber, f.LinkLanguage = form.Get("assistantId"), form.Get("phoneNumber"), form.Get("linkLanguage")
	}
	in := parley.VoiceLinkInput{AssistantID: parley.Some(form.Get("assistantId")), PhoneNumber: parley.Some(form.Get("phoneNumber")),
		Secret: parley.Some(form.Get("secret"))}
	if lang := strings.TrimSpace(form.Get("linkLanguage")); lang != "" {
		in.Language = parley.Some(lang)
	}
	_, secret, err := h.Manage.LinkVoice(c.Request().Context(), t, in)
	if e, ok := err.(*parley.Error); ok && e.Kind == parley.KindInvalid {
		if errs, isFields := e.Details.(map[string]string); isFields {
			if lang, bad := errs["language"]; bad {
				// The form's field is named linkLanguage (the settings form has its own).
				delete(errs, "language")
				errs["linkLanguage"] = lang
			}
			return h.refusedVoiceForm(c, t, "link", err, typed)
		}
	}
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	h.Sessions.Put(ctx, sessVoiceSecret, secret)
	h.Sessions.Put(ctx, dash.SessFlash, "Assistant linked: calls are answered once Vapi has the addresses and the secret.")
	return c.Redirect(http.StatusSeeOther, "/admin/voice")
}

// ShowVoiceCallRecording plays a call's recording in the dashboard: the
// signed-in owner's tenant only.
func (h *Voice) ShowVoiceCallRecording(c echo.Context) error {
	return h.RelayRecording(c, dash.AdminFrom(c).Tenant.ID, c.Param("callId"))
}

// voiceForm is the tenant and the fields of a form posted on the Voice
// page, refused unless the tenant's plan has voice.
func voiceForm(c echo.Context) (parley.Tenant, url.Values, error) {
	t := dash.AdminFrom(c).Tenant
	if !t.PlanInfo().Voice {
		return t, nil, parley.VoicePlanRequired(t.Plan)
	}
	form, err := c.FormParams()
	if err != nil {
		return t, nil, handlers.Invalid("Could not read the form")
	}
	return t, form, nil
}
