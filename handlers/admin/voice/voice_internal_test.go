package voice

import "testing"

func TestVoiceEnding(t *testing.T) {
	for reason, want := range map[string]string{
		"":                                 "",
		"customer-ended-call":              "The caller hung up",
		"silence-timed-out":                "The line stayed silent too long",
		"pipeline-error-openai-llm-failed": "The call failed (pipeline error openai llm failed)",
		"twilio-failed-to-connect-call":    "The call failed (twilio failed to connect call)",
		"call.in-progress.error-sip-telephony-provider-failed": "The call failed (call in progress error sip telephony provider failed)",
		"assistant-join-timed-out":                             "Ended: assistant join timed out",
	} {
		if got := voiceEnding(reason); got != want {
			t.Errorf("%q: %q, want %q", reason, got, want)
		}
	}
}

func TestVoiceCost(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		cost *float64
		want string
	}{{nil, ""}, {f(-1), ""}, {f(0), "$0.00"}, {f(0.001), "less than $0.01"}, {f(0.0734), "$0.07"}, {f(1.5), "$1.50"}} {
		if got := voiceCost(tc.cost); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.cost, got, tc.want)
		}
	}
}
