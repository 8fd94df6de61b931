package admin_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/parley/parley/agent/outbound/vapi/vapitest"
	"github.com/parley/parley/web/webtest"
)

func TestAdminVoice(t *testing.T) {
	t.Parallel()
	fake := vapitest.Start(t)
	b := webtest.SetupAdmin(t, map[string]string{"PARLEY_VAPI_API_KEY": vapitest.Key, "PARLEY_VAPI_BASE_URL": fake.URL()})
	ten := b.OwnedTenant(t, "scale")
	c := b.NewAdminClient(t)
	c.SignIn(ten)

	p := c.Get("/admin/voice")
	base := b.Srv.Config.BaseURL + "/voice/" + ten.Slug
	if p.Status != 200 || p.Doc.Find("#custom-llm-url").AttrOr("value", "") != base || p.Doc.Find("#server-url").AttrOr("value", "") != base+"/events" ||
		p.Doc.Find("#voice-managed").Length() != 1 || p.Doc.Find(`nav a[href="/admin/voice"][aria-current="page"]`).Length() != 1 ||
		p.Text("#no-calls") == "" {
		t.Fatalf("page: %d %s", p.Status, p.Body)
	}

	// Refused settings keep what was typed and name the fields.
	bad := url.Values{"voiceId": {"Elliot"}, "language": {"french please"}, "firstMessage": {"Hello"},
		"endCallPhrases": {"goodbye\n\nsee you"}, "maxCallDuration": {"9999"}}
	p = c.Submit("/admin/voice", bad)
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Text("#err-language"), "BCP-47") ||
		!strings.Contains(p.Text("#err-maxCallDuration"), "between 10 and 3600") || p.Doc.Find("#voiceId").AttrOr("value", "") != "Elliot" {
		t.Errorf("refused settings: %d %s", p.Status, p.Body)
	}
	if p = c.Submit("/admin/voice", url.Values{"maxCallDuration": {"ten"}}); !strings.Contains(p.Text("#err-maxCallDuration"), "whole number") {
		t.Errorf("not a number: %d %s", p.Status, p.Text("#err-maxCallDuration"))
	}
	// Turning calls on needs a setup first.
	if p = c.Submit("/admin/voice", url.Values{"voiceEnabled": {"true"}}); p.Status != http.StatusUnprocessableEntity ||
		!strings.Contains(p.Text("#err-voiceEnabled"), "set up a phone line") {
		t.Errorf("enabled without a secret: %d %s", p.Status, p.Text("#err-voiceEnabled"))
	}
	good := url.Values{"voiceId": {"Elliot"}, "language": {"fr-FR"}, "firstMessage": {"Bonjour !"},
		"endCallPhrases": {"au revoir\r\n\r\nbonne journée"}, "maxCallDuration": {"600"}}
	if p = c.Submit("/admin/voice", good); p.Status != http.StatusSeeOther {
		t.Fatalf("settings: %d %s", p.Status, p.Body)
	}
	tn := b.TenantNow(t, ten.Slug)
	if cfg := tn.VoiceConfig; cfg.Language != "fr-FR" || cfg.MaxCallDuration != 600 || len(cfg.EndCallPhrases) != 2 || cfg.EndCallPhrases[1] != "bonne journée" {
		t.Errorf("saved config: %+v", cfg)
	}

	// Link an assistant: the secret is shown once.
	c.Get("/admin/voice")
	if p = c.Submit("/admin/voice/link", url.Values{"assistantId": {""}, "phoneNumber": {"0612"}, "linkLanguage": {"fr_FR"}, "secret": {"short"}}); p.Status != http.StatusUnprocessableEntity ||
		!strings.Contains(p.Text("#err-assistantId"), "is required") || !strings.Contains(p.Text("#err-phoneNumber"), "E.164") ||
		!strings.Contains(p.Text("#err-linkLanguage"), "BCP-47") || !strings.Contains(p.Text("#err-secret"), "16 to 200") ||
		p.Doc.Find("#phoneNumber").AttrOr("value", "") != "0612" {
		t.Errorf("refused link: %d %s", p.Status, p.Doc.Find("#voice-link").Text())
	}
	if p = c.Submit("/admin/voice/link", url.Values{"assistantId": {"asst-own"}, "phoneNumber": {"+33198765432"}, "secret": {""}}); p.Status != http.StatusSeeOther {
		t.Fatalf("link: %d %s", p.Status, p.Body)
	}
	p = c.Get("/admin/voice")
	secret := p.Text("#new-voice-secret")
	if !strings.HasPrefix(secret, "vs_") || b.OpenVoiceSecret(t, ten.ID) != secret || p.Text("#voice-assistant") != "asst-own" ||
		p.Text("#voice-number") != "+33198765432" || !strings.HasPrefix(p.Text("#voice-state"), "On") {
		t.Errorf("after linking: secret %q, %s", secret, p.Doc.Find("#voice-status").Text())
	}
	if p = c.Get("/admin/voice"); p.Doc.Find("#new-voice-secret").Length() != 0 {
		t.Error("the secret is shown twice")
	}
	// Calls can now be turned off and on.
	off := webtest.FormValues(c.Get("/admin/voice").Doc.Find("#voice-form"))
	if off.Get("voiceEnabled") != "true" || off.Get("firstMessage") != "Bonjour !" || off.Get("endCallPhrases") != "au revoir\nbonne journée" {
		t.Errorf("the form as shown: %v", off)
	}
	off.Del("voiceEnabled")
	if p = c.Submit("/admin/voice", off); p.Status != http.StatusSeeOther || b.TenantNow(t, ten.Slug).VoiceEnabled {
		t.Errorf("off: %d", p.Status)
	}

	// The managed setup: a second number is refused, the orchestrator's
	// refusal is shown in words, a success shows the new secret.
	c.Get("/admin/voice")
	if p = c.Submit("/admin/voice/setup", url.Values{"buyNumber": {"true"}}); p.Status != http.StatusUnprocessableEntity ||
		!strings.Contains(p.Text("#err-buyNumber"), "one number per tenant") {
		t.Errorf("second number: %d %s", p.Status, p.Text("#err-buyNumber"))
	}
	fake.FailCreate(400)
	p = c.Submit("/admin/voice/setup", url.Values{})
	if p.Status != http.StatusSeeOther {
		t.Fatalf("refused setup: %d %s", p.Status, p.Body)
	}
	if p = c.Get("/admin/voice"); !strings.Contains(p.Text(".flash.error"), "Vapi answered HTTP 400") {
		t.Errorf("refusal not shown: %q", p.Text(".flash.error"))
	}
	fake.FailCreate(0)
	if p = c.Submit("/admin/voice/setup", url.Values{}); p.Status != http.StatusSeeOther {
		t.Fatalf("setup: %d %s", p.Status, p.Body)
	}
	p = c.Get("/admin/voice")
	if s := p.Text("#new-voice-secret"); s == "" || s == secret || b.OpenVoiceSecret(t, ten.ID) != s || len(fake.Assistants()) != 1 ||
		fake.Assistants()[0]["firstMessage"] != "Bonjour !" {
		t.Errorf("managed: secret %q, assistants %v", s, fake.Assistants())
	}
	if tn := b.TenantNow(t, ten.Slug); !tn.VoiceEnabled || *tn.VoicePhoneNumber != "+33198765432" || *tn.VoiceAssistantID != "asst-b" {
		t.Errorf("after the managed setup: %+v", tn)
	}

	// Recent calls, with a player fed by the dashboard's own route.
	host, audio := webtest.AudioHost(t)
	b.WithOutbound(t, true, nil)
	other := b.OwnedTenant(t, "scale")
	b.InsertVoiceCall(t, ten.ID, "call-a", webtest.VoiceStr(host.URL+"/wav.wav"))
	b.InsertVoiceCall(t, other.ID, "call-b", webtest.VoiceStr(host.URL+"/wav.wav"))
	p = c.Get("/admin/voice")
	if src := p.Doc.Find("#voice-calls audio").AttrOr("src", ""); src != "/admin/voice/calls/call-a/recording" ||
		!strings.Contains(p.Text("#voice-calls"), "+33612345678") || !strings.Contains(p.Text("#voice-calls"), "1 min 30 s") ||
		!strings.Contains(p.Text("#voice-calls"), "The caller hung up") || !strings.Contains(p.Text("#voice-calls details pre"), "Can someone come on Tuesday?") {
		t.Errorf("calls: %s", p.Doc.Find("#voice-calls").Text())
	}
	if p = c.Get("/admin/voice/calls/call-a/recording"); p.Status != 200 || p.Body != string(audio) || p.Header.Get("Content-Type") != "audio/wav" {
		t.Errorf("player's recording: %d %v", p.Status, p.Header)
	}
	if p = c.Get("/admin/voice/calls/call-b/recording"); p.Status != 404 {
		t.Errorf("another tenant's call: %d", p.Status)
	}
}

// TestAdminVoicePlans: without the scale plan the page says which plan is
// needed and refuses its forms; without the operator's Vapi account the
// managed setup is not offered.
func TestAdminVoicePlans(t *testing.T) {
	t.Parallel()
	b := webtest.SetupAdmin(t, nil)
	starter := b.OwnedTenant(t, "starter")
	c := b.NewAdminClient(t)
	c.SignIn(starter)
	p := c.Get("/admin/voice")
	if p.Status != 200 || p.Text("#voice-plan") != "starter" || !strings.Contains(p.Text("#voice-upgrade"), "scale") || p.Doc.Find("#voice-form").Length() != 0 {
		t.Errorf("starter: %d %s", p.Status, p.Text("main"))
	}
	for _, path := range []string{"/admin/voice", "/admin/voice/setup", "/admin/voice/link"} {
		if p := c.Submit(path, url.Values{"assistantId": {"a"}}); p.Status != http.StatusPaymentRequired {
			t.Errorf("%s on starter: %d", path, p.Status)
		}
	}
	scale := b.OwnedTenant(t, "scale")
	c = b.NewAdminClient(t)
	c.SignIn(scale)
	if p := c.Get("/admin/voice"); p.Doc.Find("#voice-managed").Length() != 0 || p.Doc.Find("#voice-link-form").Length() != 1 {
		t.Errorf("unconfigured operator: %s", p.Text("main"))
	}
	if p := c.Submit("/admin/voice/setup", url.Values{}); p.Status != http.StatusServiceUnavailable {
		t.Errorf("managed setup without the operator's account: %d", p.Status)
	}
}
