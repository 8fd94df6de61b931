package manage_test

import (
	"context"
	"strings"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/manage"
)

// signedAddresses exempts one host from https and refuses another's
// addresses.
type signedAddresses struct{ exempt, inside string }

func (a signedAddresses) Problem(_ context.Context, rawURL string, mustResolve bool) string {
	if !mustResolve && strings.Contains(rawURL, "://"+a.inside+"/") {
		return "refused: " + a.inside + " is not a public internet address"
	}
	return ""
}

func (a signedAddresses) PlainHTTP(_ context.Context, rawURL string) bool {
	return strings.Contains(rawURL, "://"+a.exempt+"/")
}

// UpdateTenant refuses, before any write, a voice change on a plan without
// voice, then the rules' problems, then the URLs Parley signs its calls
// to: credentials, plain http to a host not exempted, a private address.
func TestUpdateTenantRefusals(t *testing.T) {
	t.Parallel()
	s := &manage.Service{Addresses: signedAddresses{exempt: "127.0.0.1", inside: "inside.test"}}
	starter := parley.Tenant{Plan: "starter"}
	scale := parley.Tenant{Plan: "scale"}
	for name, c := range map[string]struct {
		cur   parley.Tenant
		in    parley.TenantInput
		field string
		want  string
	}{
		"Credentials":     {scale, parley.TenantInput{LLMWebhookURL: parley.Some("https://u:p@hooks.example.com/reply")}, "llmWebhookUrl", "must not contain credentials; calls are signed with the visitor signing key"},
		"PlainHTTP":       {scale, parley.TenantInput{VisitorContextURL: parley.Some("http://hooks.example.com/context")}, "visitorContextUrl", "must use https"},
		"PrivateAddress":  {scale, parley.TenantInput{LLMWebhookURL: parley.Some("https://inside.test/reply")}, "llmWebhookUrl", "refused: inside.test is not a public internet address"},
		"OnlyExemptPlain": {scale, parley.TenantInput{LLMWebhookURL: parley.Some("http://127.0.0.1/reply"), VisitorContextURL: parley.Some("http://inside.test/c")}, "visitorContextUrl", "must use https"},
		"ShapeBeforeVet":  {scale, parley.TenantInput{LLMWebhookURL: parley.Some("ftp://u:p@inside.test/reply")}, "llmWebhookUrl", "must be an absolute URL such as https://example.com/path"},
		"RulesProblems":   {scale, parley.TenantInput{BotTone: parley.Some("GRUMPY")}, "botTone", "must be one of"},
		"CaptchaNoKeys":   {scale, parley.TenantInput{CaptchaEnabled: parley.Some(true), CaptchaSiteKey: parley.Some("site")}, "captchaSecretKey", "is required while captchaEnabled is true"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := s.UpdateTenant(context.Background(), c.cur, c.in)
			pe, ok := err.(*parley.Error)
			if !ok || pe.Kind != parley.KindInvalid {
				t.Fatalf("error %v, want invalid", err)
			}
			if got := pe.Details.(map[string]string)[c.field]; !strings.Contains(got, c.want) {
				t.Errorf("%s: %q, want %q (all: %v)", c.field, got, c.want, pe.Details)
			}
		})
	}
	t.Run("VoiceOnPlanWithout", func(t *testing.T) {
		t.Parallel()
		// The plan is refused before the rules: the bad tone is not reported.
		_, err := s.UpdateTenant(context.Background(), starter,
			parley.TenantInput{VoiceEnabled: parley.Some(true), BotTone: parley.Some("GRUMPY")})
		pe, ok := err.(*parley.Error)
		if !ok || pe.Code != "PLAN_REQUIRED" || pe.Message != "Voice calls need the scale plan or above (current plan: starter)" {
			t.Fatalf("error %#v, want the voice plan's refusal", err)
		}
	})
	t.Run("NoAddressesRefusesHTTP", func(t *testing.T) {
		t.Parallel()
		_, err := (&manage.Service{}).UpdateTenant(context.Background(), scale,
			parley.TenantInput{LLMWebhookURL: parley.Some("http://127.0.0.1/reply")})
		if pe, ok := err.(*parley.Error); !ok || pe.Details.(map[string]string)["llmWebhookUrl"] != "must use https" {
			t.Fatalf("error %v, want llmWebhookUrl must use https", err)
		}
	})
}
