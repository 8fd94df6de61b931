package webtest

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// VoiceTenant provisions a tenant on plan with voice enabled (or not), its
// voice config and a voice secret set as the voice settings would set them
// (sealed with the server's box). It returns the tenant and the secret.
func (b *Bundle) VoiceTenant(t *testing.T, plan string, enabled bool, config string) (Tenant, string) {
	t.Helper()
	ten := b.NewTenant(t, plan)
	secret := "vsec-" + ten.Slug
	b.Exec(t, `UPDATE tenants SET voice_enabled = $2, voice_config = $3, voice_secret = $4 WHERE id = $1`,
		ten.ID, enabled, config, b.Box.Seal([]byte(secret)))
	return ten, secret
}

// VoiceResponse is an answer of a /voice endpoint: the JSON body, or the
// SSE data events (raw, [DONE] included).
type VoiceResponse struct {
	Status int
	header http.Header
	Body   map[string]any
	events []string
}

// VoicePost posts body (a string is sent as it is) to path with headers.
func (b *Bundle) VoicePost(t *testing.T, path string, headers map[string]string, body any) VoiceResponse {
	t.Helper()
	raw, _ := json.Marshal(body)
	if s, ok := body.(string); ok {
		raw = []byte(s)
	}
	req, _ := http.NewRequest("POST", b.TS.URL+path, strings.NewReader(string(raw)))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := b.TS.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := VoiceResponse{Status: resp.StatusCode, header: resp.Header}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				out.events = append(out.events, data)
			}
		}
		return out
	}
	all, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(all, &out.Body); err != nil {
		t.Fatalf("POST %s: bad JSON answer %d %q", path, resp.StatusCode, all)
	}
	return out
}

// Spoken is the text of a chat.completion.chunk stream, checked for the
// shape: a role chunk first, a stop chunk, then [DONE].
func (r VoiceResponse) Spoken(t *testing.T) string {
	t.Helper()
	if r.Status != 200 || len(r.events) < 3 || r.events[len(r.events)-1] != "[DONE]" {
		t.Fatalf("stream: %d %v %q", r.Status, r.Body, r.events)
	}
	var text strings.Builder
	for i, e := range r.events[:len(r.events)-1] {
		var chunk struct {
			Object  string `json:"object"`
			Choices []struct {
				Delta        map[string]string `json:"delta"`
				FinishReason *string           `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(e), &chunk); err != nil || chunk.Object != "chat.completion.chunk" || len(chunk.Choices) != 1 {
			t.Fatalf("chunk %d: %q", i, e)
		}
		ch := chunk.Choices[0]
		switch {
		case i == 0 && ch.Delta["role"] != "assistant":
			t.Errorf("first chunk %q has no role", e)
		case i == len(r.events)-2 && (ch.FinishReason == nil || *ch.FinishReason != "stop"):
			t.Errorf("last chunk %q does not stop", e)
		}
		text.WriteString(ch.Delta["content"])
	}
	return text.String()
}

func VoiceBearer(secret string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + secret}
}

func VoiceStr(s string) *string { return &s }

// TenantOf reads GET /tenants/{slug}'s tenant.
func (b *Bundle) TenantOf(t *testing.T, ten Tenant) map[string]any {
	t.Helper()
	st, got := b.Do(t, "GET", "/tenants/"+ten.Slug, ten.Token, nil)
	if st != 200 {
		t.Fatalf("GET tenant: %d %v", st, got)
	}
	return got["tenant"].(map[string]any)
}

// OpenVoiceSecret opens the tenant's stored voice secret.
func (b *Bundle) OpenVoiceSecret(t *testing.T, tenantID string) string {
	t.Helper()
	var sealed []byte
	if err := b.DB.Pool().QueryRow(t.Context(), `SELECT voice_secret FROM tenants WHERE id = $1`, tenantID).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if sealed == nil {
		return ""
	}
	plain, err := b.Box.Open(sealed)
	if err != nil {
		t.Fatal(err)
	}
	return string(plain)
}

// InsertVoiceCall adds a call of the tenant as the voice runtime would.
func (b *Bundle) InsertVoiceCall(t *testing.T, tenantID, callID string, recording *string) {
	t.Helper()
	if _, err := b.DB.Pool().Exec(t.Context(), `INSERT INTO voice_calls (tenant_id, call_id, status, caller_number,
		started_at, ended_at, ended_reason, duration_seconds, summary, transcript, recording_url)
		VALUES ($1, $2, 'ended', '+33612345678', now() - interval '2 minutes', now() - interval '30 seconds',
		'customer-ended-call', 90.4, 'The caller booked a visit for Tuesday at 9.', $3, $4)`,
		tenantID, callID, "AI: Hello.\nUser: Can someone come on Tuesday?", recording); err != nil {
		t.Fatal(err)
	}
}

// AudioHost serves recordings: /wav.wav as audio/wav, /page as text/html.
func AudioHost(t *testing.T) (*httptest.Server, []byte) {
	t.Helper()
	audio := []byte("RIFF\x24\x00\x00\x00WAVEfmt fake audio bytes")
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/wav.wav":
			w.Header().Set("Content-Type", "audio/wav")
			_, _ = w.Write(audio)
		case "/page":
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<script>alert(1)</script>"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(ts.Close)
	return ts, audio
}
