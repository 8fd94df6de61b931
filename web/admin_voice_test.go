package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/parley/parley/agent/outbound/vapi/vapitest"
)

func TestAdminVoice(t *testing.T) {
	t.Parallel()
	fake := vapitest.Start(t)
	b := setupAdmin(t, map[string]string{"PARLEY_VAPI_API_KEY": vapitest.Key, "PARLEY_VAPI_BASE_URL": fake.URL()})
	ten := b.ownedTenant(t, "scale")
	c := b.newAdminClient(t)
	c.signIn(ten)

	p := c.get("/admin/voice")
	base := b.srv.Config.BaseURL + "/voice/" + ten.Slug
	if p.status != 200 || p.doc.Find("#custom-llm-url").AttrOr("value", "") != base || p.doc.Find("#server-url").AttrOr("value", "") != base+"/events" ||
		p.doc.Find("#voice-managed").Length() != 1 || p.doc.Find(`nav a[href="/admin/voice"][aria-current="page"]`).Length() != 1 ||
		p.text("#no-calls") == "" {
		t.Fatalf("page: %d %s", p.status, p.body)
	}

	// Refused settings keep what was typed and name the fields.
	bad := url.Values{"voiceId": {"Elliot"}, "language": {"french please"}, "firstMessage": {"Hello"},
		"endCallPhrases": {"goodbye\n\nsee you"}, "maxCallDuration": {"9999"}}
	p = c.submit("/admin/voice", bad)
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.text("#err-language"), "BCP-47") ||
		!strings.Contains(p.text("#err-maxCallDuration"), "between 10 and 3600") || p.doc.Find("#voiceId").AttrOr("value", "") != "Elliot" {
		t.Errorf("refused settings: %d %s", p.status, p.body)
	}
	if p = c.submit("/admin/voice", url.Values{"maxCallDuration": {"ten"}}); !strings.Contains(p.text("#err-maxCallDuration"), "whole number") {
		t.Errorf("not a number: %d %s", p.status, p.text("#err-maxCallDuration"))
	}
	// Turning calls on needs a setup first.
	if p = c.submit("/admin/voice", url.Values{"voiceEnabled": {"true"}}); p.status != http.StatusUnprocessableEntity ||
		!strings.Contains(p.text("#err-voiceEnabled"), "set up a phone line") {
		t.Errorf("enabled without a secret: %d %s", p.status, p.text("#err-voiceEnabled"))
	}
	good := url.Values{"voiceId": {"Elliot"}, "language": {"fr-FR"}, "firstMessage": {"Bonjour !"},
		"endCallPhrases": {"au revoir\r\n\r\nbonne journée"}, "maxCallDuration": {"600"}}
	if p = c.submit("/admin/voice", good); p.status != http.StatusSeeOther {
		t.Fatalf("settings: %d %s", p.status, p.body)
	}
	tn := b.tenantNow(t, ten.Slug)
	if cfg := tn.VoiceConfig; cfg.Language != "fr-FR" || cfg.MaxCallDuration != 600 || len(cfg.EndCallPhrases) != 2 || cfg.EndCallPhrases[1] != "bonne journée" {
		t.Errorf("saved config: %+v", cfg)
	}

	// Link an assistant: the secret is shown once.
	c.get("/admin/voice")
	if p = c.submit("/admin/voice/link", url.Values{"assistantId": {""}, "phoneNumber": {"0612"}, "linkLanguage": {"fr_FR"}, "secret": {"short"}}); p.status != http.StatusUnprocessableEntity ||
		!strings.Contains(p.text("#err-assistantId"), "is required") || !strings.Contains(p.text("#err-phoneNumber"), "E.164") ||
		!strings.Contains(p.text("#err-linkLanguage"), "BCP-47") || !strings.Contains(p.text("#err-secret"), "16 to 200") ||
		p.doc.Find("#phoneNumber").AttrOr("value", "") != "0612" {
		t.Errorf("refused link: %d %s", p.status, p.doc.Find("#voice-link").Text())
	}
	if p = c.submit("/admin/voice/link", url.Values{"assistantId": {"asst-own"}, "phoneNumber": {"+33198765432"}, "secret": {""}}); p.status != http.StatusSeeOther {
		t.Fatalf("link: %d %s", p.status, p.body)
	}
	p = c.get("/admin/voice")
	secret := p.text("#new-voice-secret")
	if !strings.HasPrefix(secret, "vs_") || b.openVoiceSecret(t, ten.ID) != secret || p.text("#voice-assistant") != "asst-own" ||
		p.text("#voice-number") != "+33198765432" || !strings.HasPrefix(p.text("#voice-state"), "On") {
		t.Errorf("after linking: secret %q, %s", secret, p.doc.Find("#voice-status").Text())
	}
	if p = c.get("/admin/voice"); p.doc.Find("#new-voice-secret").Length() != 0 {
		t.Error("the secret is shown twice")
	}
	// Calls can now be turned off and on.
	off := formValues(c.get("/admin/voice").doc.Find("#voice-form"))
	if off.Get("voiceEnabled") != "true" || off.Get("firstMessage") != "Bonjour !" || off.Get("endCallPhrases") != "au revoir\nbonne journée" {
		t.Errorf("the form as shown: %v", off)
	}
	off.Del("voiceEnabled")
	if p = c.submit("/admin/voice", off); p.status != http.StatusSeeOther || b.tenantNow(t, ten.Slug).VoiceEnabled {
		t.Errorf("off: %d", p.status)
	}

	// The managed setup: a second number is refused, the orchestrator's
	// refusal is shown in words, a success shows the new secret.
	c.get("/admin/voice")
	if p = c.submit("/admin/voice/setup", url.Values{"buyNumber": {"true"}}); p.status != http.StatusUnprocessableEntity ||
		!strings.Contains(p.text("#err-buyNumber"), "one number per tenant") {
		t.Errorf("second number: %d %s", p.status, p.text("#err-buyNumber"))
	}
	fake.FailCreate(400)
	p = c.submit("/admin/voice/setup", url.Values{})
	if p.status != http.StatusSeeOther {
		t.Fatalf("refused setup: %d %s", p.status, p.body)
	}
	if p = c.get("/admin/voice"); !strings.Contains(p.text(".flash.error"), "Vapi answered HTTP 400") {
		t.Errorf("refusal not shown: %q", p.text(".flash.error"))
	}
	fake.FailCreate(0)
	if p = c.submit("/admin/voice/setup", url.Values{}); p.status != http.StatusSeeOther {
		t.Fatalf("setup: %d %s", p.status, p.body)
	}
	p = c.get("/admin/voice")
	if s := p.text("#new-voice-secret"); s == "" || s == secret || b.openVoiceSecret(t, ten.ID) != s || len(fake.Assistants()) != 1 ||
		fake.Assistants()[0]["firstMessage"] != "Bonjour !" {
		t.Errorf("managed: secret %q, assistants %v", s, fake.Assistants())
	}
	if tn := b.tenantNow(t, ten.Slug); !tn.VoiceEnabled || *tn.VoicePhoneNumber != "+33198765432" || *tn.VoiceAssistantID != "asst-b" {
		t.Errorf("after the managed setup: %+v", tn)
	}

	// Recent calls, with a player fed by the dashboard's own route.
	host, audio := audioHost(t)
	b.withOutbound(t, true, nil)
	other := b.ownedTenant(t, "scale")
	b.insertVoiceCall(t, ten.ID, "call-a", voiceStr(host.URL+"/wav.wav"))
	b.insertVoiceCall(t, other.ID, "call-b", voiceStr(host.URL+"/wav.wav"))
	p = c.get("/admin/voice")
	if src := p.doc.Find("#voice-calls audio").AttrOr("src", ""); src != "/admin/voice/calls/call-a/recording" ||
		!strings.Contains(p.text("#voice-calls"), "+33612345678") || !strings.Contains(p.text("#voice-calls"), "1 min 30 s") ||
		!strings.Contains(p.text("#voice-calls"), "The caller hung up") || !strings.Contains(p.text("#voice-calls details pre"), "Can someone come on Tuesday?") {
		t.Errorf("calls: %s", p.doc.Find("#voice-calls").Text())
	}
	if p = c.get("/admin/voice/calls/call-a/recording"); p.status != 200 || p.body != string(audio) || p.header.Get("Content-Type") != "audio/wav" {
		t.Errorf("player's recording: %d %v", p.status, p.header)
	}
	if p = c.get("/admin/voice/calls/call-b/recording"); p.status != 404 {
		t.Errorf("another tenant's call: %d", p.status)
	}
}

// TestAdminVoicePlans: without the scale plan the page says which plan is
// needed and refuses its forms; without the operator's Vapi account the
// managed setup is not offered.
func TestAdminVoicePlans(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t, nil)
	starter := b.ownedTenant(t, "starter")
	c := b.newAdminClient(t)
	c.signIn(starter)
	p := c.get("/admin/voice")
	if p.status != 200 || p.text("#voice-plan") != "starter" || !strings.Contains(p.text("#voice-upgrade"), "scale") || p.doc.Find("#voice-form").Length() != 0 {
		t.Errorf("starter: %d %s", p.status, p.text("main"))
	}
	for _, path := range []string{"/admin/voice", "/admin/voice/setup", "/admin/voice/link"} {
		if p := c.submit(path, url.Values{"assistantId": {"a"}}); p.status != http.StatusPaymentRequired {
			t.Errorf("%s on starter: %d", path, p.status)
		}
	}
	scale := b.ownedTenant(t, "scale")
	c = b.newAdminClient(t)
	c.signIn(scale)
	if p := c.get("/admin/voice"); p.doc.Find("#voice-managed").Length() != 0 || p.doc.Find("#voice-link-form").Length() != 1 {
		t.Errorf("unconfigured operator: %s", p.text("main"))
	}
	if p := c.submit("/admin/voice/setup", url.Values{}); p.status != http.StatusServiceUnavailable {
		t.Errorf("managed setup without the operator's account: %d", p.status)
	}
}
