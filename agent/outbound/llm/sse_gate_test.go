package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	anthropicsse "github.com/anthropics/anthropic-sdk-go/packages/ssestream"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
)

func TestEventEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int // length of the prefix through the first whole event
	}{
		{"", 0},
		{"data: {}\n", 0},                     // no empty line yet
		{"data: {}\n\n", len("data: {}\n\n")}, // the plain case
		{"data: {}\r\n\r\nmore", len("data: {}\r\n\r\n")},
		{"event: ping\ndata: {}\n\ndata: x\n\n", len("event: ping\ndata: {}\n\n")},
		{"data\n\n", len("data\n\n")},                                       // a data field without a colon
		{": keep-alive\n\ndata: 1\n\n", len(": keep-alive\n\ndata: 1\n\n")}, // a comment is no event
		{"\n\n\ndata: 1\n\n", len("\n\n\ndata: 1\n\n")},                     // nor are empty lines
		{"id: 7\n\n", 0}, // nor a block without data or event
		{"event: done\n\n", len("event: done\n\n")},           // Anthropic's decoder dispatches it
		{"data: 1\n\r", 0},                                    // "\r" alone does not end a line for the SDKs
		{"dataset: 1\n\n", 0},                                 // the field is "dataset"
		{"data: a\ndata: b\n\n", len("data: a\ndata: b\n\n")}, // several data lines, one event
	} {
		if got := eventEnd([]byte(tc.in)); got != tc.want {
			t.Errorf("eventEnd(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// piecesReader returns its data in pieces of random sizes, then err.
type piecesReader struct {
	data   []byte
	rnd    *rand.Rand
	err    error
	closed bool
	// withLast: the last piece comes with err, as a reader may return it.
	withLast bool
}

func (r *piecesReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := min(len(p), len(r.data), 1+r.rnd.IntN(40))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	if r.withLast && len(r.data) == 0 {
		return n, r.err
	}
	return n, nil
}

func (r *piecesReader) Close() error { r.closed = true; return nil }

// sampleStream is an event stream with what the wire may carry: CRLF lines,
// comments, an id-only block, a long event, and several events per write.
func sampleStream() []byte {
	var b bytes.Buffer
	b.WriteString(": hello\n\n")
	for i := range 40 {
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, "event: delta\r\ndata: {\"i\":%d}\r\n\r\n", i)
		case 1:
			fmt.Fprintf(&b, "data: {\"text\":%q}\n\n", strings.Repeat("x", 700+i))
		case 2:
			fmt.Fprintf(&b, "id: %d\n\ndata: {\"i\":%d}\n\n", i, i)
		case 3:
			fmt.Fprintf(&b, "data: {\"a\":1}\ndata: {\"b\":2}\n\n")
		default:
			fmt.Fprintf(&b, "event: ping\ndata: {}\n\n: keep-alive\n\n")
		}
	}
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// The body hands out exactly the stream's bytes, in order, however waits
// and reads of any size are mixed; after a wait it hands out one whole
// event and stops there.
func TestGatedBodyIsTransparent(t *testing.T) {
	t.Parallel()
	want := sampleStream()
	for seed := range uint64(50) {
		rnd := rand.New(rand.NewPCG(seed, 1))
		src := &piecesReader{data: want, rnd: rnd, err: io.EOF}
		b := &gatedBody{rc: src}
		var got []byte
		for {
			if rnd.IntN(2) == 0 {
				b.wait()
				if b.ready > 0 {
					// Read in full, the event waited for comes out whole and alone.
					ev := make([]byte, 64<<10)
					n, err := b.Read(ev)
					if err != nil || n != eventEnd(ev[:n]) {
						t.Fatalf("seed %d: after wait, Read gave %q (%v): not exactly one event", seed, ev[:n], err)
					}
					got = append(got, ev[:n]...)
					continue
				}
			}
			p := make([]byte, 1+rnd.IntN(100))
			n, err := b.Read(p)
			got = append(got, p[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("seed %d: Read: %v", seed, err)
			}
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("seed %d: the body handed out %d bytes that differ from the %d sent", seed, len(got), len(want))
		}
		if err := b.Close(); err != nil || !src.closed {
			t.Fatalf("seed %d: Close did not close the body", seed)
		}
	}
}

// A body that fails hands out what it had, then the error; a wait on it
// returns rather than blocking.
func TestGatedBodyError(t *testing.T) {
	t.Parallel()
	boom := errors.New("connection reset")
	b := &gatedBody{rc: &piecesReader{data: []byte("data: {\"partial\""), rnd: rand.New(rand.NewPCG(1, 2)), err: boom}}
	b.wait()
	if b.ready != 0 {
		t.Fatalf("ready = %d for an incomplete event", b.ready)
	}
	got, err := io.ReadAll(b)
	if string(got) != `data: {"partial"` || !errors.Is(err, boom) {
		t.Fatalf("ReadAll = %q, %v; want the partial event then the error", got, err)
	}
	b.wait() // returns at once
}

// parkedStackOf waits until a goroutine whose stack mentions marker is
// parked, and returns that stack.
func parkedStackOf(t *testing.T, marker string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, marker) && strings.Contains(g, "IO wait") {
				return g
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no goroutine parked in %s", marker)
	return ""
}

// While the model is silent, the goroutine reading its stream waits at the
// gate, under none of the SDK's frames: the point of the gate.
func TestStreamWaitsAtTheGate(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, s Stream, cancel context.CancelFunc) {
		t.Helper()
		done := make(chan llmResult, 1)
		go func() { done <- collectStream(s) }()
		stack := parkedStackOf(t, "llm.(*chunkStream")
		if !strings.Contains(stack, "llm.(*gatedBody).wait") || strings.Contains(stack, "ssestream") {
			t.Errorf("the stream waits for the model here, want at the gate and under no SDK frame:\n%s", stack)
		}
		cancel()
		select {
		case r := <-done:
			if r.text() != "Hello" || r.err == nil {
				t.Errorf("got %q, %v; want the text so far and the cancellation", r.text(), r.err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the stream did not end when its context was cancelled")
		}
	}

	t.Run("OpenAI", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewOpenAI(t, llmtest.Turn{Text: []string{"Hello"}, Stall: true})
		p := NewOpenAI(OpenAIConfig{BaseURL: srv.URL, APIKey: testLLMKey, Model: "gpt-test"})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		s, err := p.Stream(ctx, userRequest("Hi"))
		if err != nil {
			t.Fatal(err)
		}
		check(t, s, cancel)
	})

	t.Run("Anthropic", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, ev := range anthropicToolTurn[:2] {
				fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.name, ev.data)
			}
			fmt.Fprint(w, `event: content_block_delta`+"\n"+`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`+"\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}))
		defer srv.Close()
		p := NewAnthropic(AnthropicConfig{BaseURL: srv.URL, APIKey: testLLMKey, Model: "claude-test", HTTPClient: srv.Client()})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		s, err := p.Stream(ctx, userRequest("Hi"))
		if err != nil {
			t.Fatal(err)
		}
		check(t, s, cancel)
	})
}

// randomStream is an event stream of random lines: data, event and other
// fields, comments, empty lines, CRLF endings, a field without a colon, a
// value without its space; it may end inside an event.
func randomStream(rnd *rand.Rand) []byte {
	var b bytes.Buffer
	for range 1 + rnd.IntN(60) {
		var line string
		switch rnd.IntN(9) {
		case 0, 1, 2:
			line = fmt.Sprintf("data: {\"i\":%d,\"t\":%q}", rnd.IntN(100), strings.Repeat("w", rnd.IntN(900)))
		case 3:
			line = "data:" + strings.Repeat("z", rnd.IntN(5))
		case 4:
			line = fmt.Sprintf("event: e%d", rnd.IntN(3))
		case 5:
			line = ": keep-alive"
		case 6:
			line = fmt.Sprintf("id: %d", rnd.IntN(9))
		case 7:
			line = []string{"data", "event", "dataset: 1", "retry: 10"}[rnd.IntN(4)]
		}
		b.WriteString(line) // case 8: an empty line
		if rnd.IntN(4) == 0 {
			b.WriteString("\r")
		}
		b.WriteString("\n")
		if rnd.IntN(3) == 0 {
			b.WriteString("\n")
		}
	}
	if rnd.IntN(3) == 0 {
		b.WriteString("data: {\"cut\":") // the body ends inside an event
	}
	return b.Bytes()
}

// sseDecoder is what both SDKs' decoders and the gate's have in common,
// the event read as its type and data.
type sseDecoder interface {
	Next() bool
	Err() error
	Close() error
	event() (string, []byte)
}

type openaiSDKDecoder struct{ ssestream.Decoder }

func (d openaiSDKDecoder) event() (string, []byte) { e := d.Event(); return e.Type, e.Data }

type anthropicSDKDecoder struct{ anthropicsse.Decoder }

func (d anthropicSDKDecoder) event() (string, []byte) { e := d.Event(); return e.Type, e.Data }

// Decoded from the gate's buffer, a stream gives the events each SDK's
// ssestream decoder gives, in the same order with the same types and data,
// and the same error: whatever pieces the network brings it in, whether or
// not the reader waits at the gate first, whether the body ends or fails,
// and whether its end comes with its last bytes or after them.
func TestGatedEventsDecodeAsTheSDK(t *testing.T) {
	t.Parallel()
	boom := errors.New("connection reset")
	sse := http.Header{"Content-Type": {"text/event-stream"}}
	for _, sdk := range []string{"openai", "anthropic"} {
		for seed := range uint64(300) {
			rnd := rand.New(rand.NewPCG(seed, 7))
			stream := sampleStream()
			if seed > 0 {
				stream = randomStream(rnd)
			}
			end := io.EOF
			if seed%5 == 4 {
				end = boom
			}
			theirs := io.NopCloser(&piecesReader{data: stream, rnd: rand.New(rand.NewPCG(seed, 8)), err: end})
			src := &piecesReader{data: stream, rnd: rand.New(rand.NewPCG(seed, 9)), err: end, withLast: seed%2 == 1}
			gate := &eventGate{body: &gatedBody{rc: src}}
			var want, ours sseDecoder
			if sdk == "openai" {
				want = openaiSDKDecoder{ssestream.NewDecoder(&http.Response{Header: sse, Body: theirs})}
				ours = openaiSDKDecoder{&gatedEvents{gatedDecoder{b: gate.body, rc: src}}}
			} else {
				want = anthropicSDKDecoder{anthropicsse.NewDecoder(&http.Response{Header: sse, Body: theirs})}
				// As the SDK finds it: by the content type the gate gives the response.
				ours = anthropicSDKDecoder{anthropicsse.NewDecoder(&http.Response{
					Header: http.Header{"Content-Type": {gatedEventStream}}, Body: gate.body})}
				if _, ok := ours.(anthropicSDKDecoder).Decoder.(*gatedAnthropicEvents); !ok {
					t.Fatalf("anthropic-sdk-go decodes a gated body with %T", ours.(anthropicSDKDecoder).Decoder)
				}
			}
			var n int
			for {
				if rnd.IntN(2) == 0 {
					gate.wait()
				}
				more, wantMore := ours.Next(), want.Next()
				if more != wantMore {
					t.Fatalf("%s, seed %d, event %d: Next = %v, the SDK's %v\nstream %q", sdk, seed, n, more, wantMore, stream)
				}
				if !more {
					break
				}
				gt, gd := ours.event()
				wt, wd := want.event()
				if gt != wt || !bytes.Equal(gd, wd) {
					t.Fatalf("%s, seed %d, event %d: %q %q, the SDK's %q %q", sdk, seed, n, gt, gd, wt, wd)
				}
				n++
			}
			if g, w := ours.Err(), want.Err(); !errors.Is(g, w) && g != w {
				t.Fatalf("%s, seed %d: Err = %v, the SDK's %v", sdk, seed, g, w)
			}
			if seed == 0 && n != 41 {
				t.Fatalf("%s: the sample stream gave %d events, want 41", sdk, n)
			}
			if err := ours.Close(); err != nil || !src.closed {
				t.Fatalf("%s, seed %d: Close did not close the body", sdk, seed)
			}
		}
	}
}
