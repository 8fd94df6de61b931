package web_test

// Load benchmark of the voice channel's custom LLM (BENCHMARKS.md, "Voice
// custom LLM"): what Parley adds to the time until the orchestrator gets
// the first words it can speak, with the zero-latency model of
// chat_bench_test.go.
//
//	go test -run '^$' -bench BenchmarkVoiceTurn -benchtime 1000x ./web/

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var voiceCallSeq atomic.Int64

// voiceTurn posts one custom LLM request of call callID and reads the
// stream to [DONE]: ttfb is the first chunk (the role, sent once the turn
// is open), ttfc the first chunk with words to speak.
func (cb *chatBench) voiceTurn(ctx context.Context, slug, secret, callID string) (ttfb, ttfc time.Duration, err error) {
	body := fmt.Sprintf(`{"model":"parley","stream":true,"messages":[{"role":"system","content":"ignored"},`+
		`{"role":"assistant","content":"Hello, how can I help?"},{"role":"user","content":"Hello, what do you sell?"}],"call":{"id":%q}}`, callID)
	var wrote time.Time
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { wrote = time.Now() }})
	req, err := http.NewRequestWithContext(ctx, "POST", cb.ts.URL+"/voice/"+slug+"/chat/completions", strings.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := cb.client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		return 0, 0, fmt.Errorf("status %d: %s", resp.StatusCode, raw)
	}
	r := bufio.NewReader(resp.Body)
	var last []byte
	for {
		line, err := r.ReadSlice('\n')
		if bytes.HasPrefix(line, []byte("data:")) {
			if ttfb == 0 {
				ttfb = time.Since(wrote)
			}
			if ttfc == 0 && bytes.Contains(line, []byte(`"content":"`)) && !bytes.Contains(line, []byte(`"content":""`)) {
				ttfc = time.Since(wrote)
			}
			last = append(last[:0], line...)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, 0, err
		}
	}
	if ttfc == 0 || !bytes.Contains(last, []byte("[DONE]")) {
		return 0, 0, fmt.Errorf("no words, or no [DONE] at the end: %q", last)
	}
	return ttfb, ttfc, nil
}

// BenchmarkVoiceTurn sends b.N custom LLM turns, streamed, at concurrency
// 1 and 10, and reports the time to the first chunk and to the first
// words (raw, and added to the model's own time to first byte); in the
// call1/ runs every turn is a call's first (a new call and conversation),
// in the call10/ runs each worker's calls have 10 turns.
func BenchmarkVoiceTurn(b *testing.B) {
	cb := newChatBench(b)
	for _, perCall := range []int{1, 10} {
		for _, conc := range []int{1, 10} {
			b.Run(fmt.Sprintf("call%d/c%d", perCall, conc), func(b *testing.B) { cb.benchVoice(b, conc, perCall) })
		}
	}
}

func (cb *chatBench) benchVoice(b *testing.B, conc, perCall int) {
	ctx := context.Background()
	slug, tenantID := cb.tenant(b)
	secret := "bench-voice-" + slug
	if _, err := cb.store.Pool().Exec(ctx, `UPDATE tenants SET voice_enabled = true, voice_config = '{"language": "en-US"}',
		voice_secret = $2 WHERE id = $1`, tenantID, cb.box.Seal([]byte(secret))); err != nil {
		b.Fatal(err)
	}
	sent := make([]int, conc)
	call := make([]string, conc)
	turn := func(w int) (timing, error) {
		if sent[w]%perCall == 0 {
			call[w] = fmt.Sprintf("bench-call-%d", voiceCallSeq.Add(1))
		}
		sent[w]++
		ttfb, ttfc, err := cb.voiceTurn(ctx, slug, secret, call[w])
		return timing{ttfb: ttfb, total: ttfc}, err // total holds the time to the first words
	}
	_, _ = runLoad(b, min(2*conc, 50), conc, turn) // warm up
	direct, _ := runLoad(b, min(b.N, 1000), conc, func(int) (timing, error) { t, _, err := cb.modelTurn(ctx, false); return t, err })
	q0 := cb.queries.n.Load()
	b.ResetTimer()
	got, _ := runLoad(b, b.N, conc, turn)
	b.StopTimer()
	b.ReportMetric(float64(cb.queries.n.Load()-q0)/float64(b.N), "db-statements/turn")
	ttfb := pick(got, func(t timing) time.Duration { return t.ttfb })
	ttfc := pick(got, func(t timing) time.Duration { return t.total })
	model := pick(direct, func(t timing) time.Duration { return t.ttfb })
	b.ReportMetric(quantile(ttfb, 0.50), "first-chunk-p50-ms")
	b.ReportMetric(quantile(ttfb, 0.99), "first-chunk-p99-ms")
	b.ReportMetric(quantile(ttfc, 0.50), "first-words-p50-ms")
	b.ReportMetric(quantile(ttfc, 0.99), "first-words-p99-ms")
	b.ReportMetric(quantile(ttfc, 0.50)-quantile(model, 0.50), "added-first-words-p50-ms")
	b.ReportMetric(quantile(ttfc, 0.99)-quantile(model, 0.99), "added-first-words-p99-ms")
	b.ReportMetric(quantile(model, 0.99), "model-ttfb-p99-ms")
}
