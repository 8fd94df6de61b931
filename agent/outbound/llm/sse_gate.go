package llm

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"

	anthropicsse "github.com/anthropics/anthropic-sdk-go/packages/ssestream"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// An open chat stream spends most of its life waiting for the model's next
// event, and a goroutine's stack is sized by how deep it is while it waits:
// the runtime halves a parked goroutine's stack at each garbage collection
// only while less than a quarter of it is in use. Waiting inside the SDKs'
// Stream.Next means waiting under their frames (3 KiB for openai-go's chunk
// type, 5 KiB for anthropic-sdk-go's) and under the chunk-typed frames of
// the loop that calls them, which keeps each stream's handler at 32 KiB of
// stack instead of 16 KiB (BENCHMARKS.md, open streams).
//
// The event gate moves that wait up: the SDK's response body is wrapped so
// that the stream's loop can block on it first, in a small frame, until the
// body holds a whole event; the body then hands the SDK that event and no
// more, so Stream.Next decodes it without reading the network. The wrapper
// is a transparent reader: whatever it hands out, in whatever pieces, is the
// body's bytes in order, and a read it was not ready for goes straight to
// the body, so the SDKs see the same stream either way.

// gateKey is the context key under which a stream's eventGate travels from
// Provider.Stream to gateMiddleware.
type gateKey struct{}

// eventGate is where gateMiddleware leaves the wrapped body of one streaming
// call.
type eventGate struct{ body *gatedBody }

// withEventGate returns ctx carrying a new gate for one streaming call.
func withEventGate(ctx context.Context) (context.Context, *eventGate) {
	g := &eventGate{}
	return context.WithValue(ctx, gateKey{}, g), g
}

// wait blocks until the body holds the next whole event, or ends. A gate
// with no body (the response was not an event stream) does not wait.
func (g *eventGate) wait() {
	if g != nil && g.body != nil {
		g.body.wait()
	}
}

// ahead reports whether the body holds the next whole event already, so
// that reading it will not wait for the network; false without a body.
func (g *eventGate) ahead() bool {
	return g != nil && g.body != nil && (g.body.ready > 0 || eventEnd(g.body.buf[g.body.off:]) > 0)
}

// gateMiddleware is an SDK middleware (openai-go's and anthropic-sdk-go's
// have the same signature) wrapping a successful event-stream response of a
// call made with withEventGate.
func gateMiddleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	resp, err := next(req)
	g, _ := req.Context().Value(gateKey{}).(*eventGate)
	if err != nil || g == nil || resp == nil || resp.Body == nil || resp.StatusCode/100 != 2 {
		return resp, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return resp, err
	}
	g.body = &gatedBody{rc: resp.Body}
	resp.Body = g.body
	resp.Header.Set("Content-Type", gatedEventStream) // anthropic-sdk-go's decoder: the gate's
	return resp, err
}

// gatedBody buffers an event stream's body so that its reader can wait for
// a whole event before reading it.
type gatedBody struct {
	rc    io.ReadCloser
	buf   []byte // read from rc and not handed out yet: buf[off:]
	off   int
	ready int   // bytes of buf[off:] up to the end of a whole event; 0: none known
	err   error // rc's error, returned once buf is drained
}

const gateMinBuffer = 512

// wait reads the body until what is buffered holds a whole event, the body
// ends or fails.
func (b *gatedBody) wait() {
	for b.ready == 0 {
		if n := eventEnd(b.buf[b.off:]); n > 0 {
			b.ready = n
			return
		}
		if b.err != nil { // the body's last read may have brought events with its end
			return
		}
		if b.off > 0 { // keep the unread part at the start
			b.buf = b.buf[:copy(b.buf, b.buf[b.off:])]
			b.off = 0
		}
		if len(b.buf) == cap(b.buf) {
			b.buf = append(b.buf, make([]byte, max(gateMinBuffer, cap(b.buf)))...)[:len(b.buf)]
		}
		n, err := b.rc.Read(b.buf[len(b.buf):cap(b.buf)])
		b.buf = b.buf[:len(b.buf)+n]
		b.err = err
	}
}

// Read hands out what is buffered (up to the end of the event waited for,
// when there is one), else reads the body.
func (b *gatedBody) Read(p []byte) (int, error) {
	if b.off == len(b.buf) {
		if b.err != nil {
			return 0, b.err
		}
		return b.rc.Read(p)
	}
	avail := b.buf[b.off:]
	if b.ready > 0 {
		avail = avail[:b.ready]
	}
	n := copy(p, avail)
	b.off += n
	b.ready = max(b.ready-n, 0)
	if b.off == len(b.buf) {
		b.buf, b.off = b.buf[:0], 0
	}
	return n, nil
}

// Close closes the body.
func (b *gatedBody) Close() error { return b.rc.Close() }

// eventEnd returns the length of the shortest prefix of data ending with a
// whole event as the SDKs' decoders see one (lines end with "\n", a "\r"
// before it is dropped; an empty line ends an event that had a "data" or
// "event" field), or 0 when data holds none.
func eventEnd(data []byte) int {
	fields := false
	for rest := data; ; {
		line, r, ok := cutLine(rest)
		if !ok {
			return 0
		}
		rest = r
		if len(line) == 0 {
			if fields {
				return len(data) - len(rest)
			}
			continue
		}
		name, _, _ := bytes.Cut(line, []byte(":"))
		if string(name) == "data" || string(name) == "event" {
			fields = true
		}
	}
}

// cutLine cuts data's first line as the SDKs' decoders read lines: it ends
// with "\n", one "\r" before it dropped. ok is false when data holds no
// whole line.
func cutLine(data []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		return nil, data, false
	}
	return bytes.TrimSuffix(data[:i], []byte("\r")), data[i+1:], true
}

// gatedDecoder decodes the events of a gated body straight from the gate's
// buffer, as the SDKs' ssestream decoders do from their own scanners: an
// open stream then holds the gate's buffer (one event, from 512 bytes) and
// not a scanner's 4 KiB besides (BENCHMARKS.md, open streams). What it
// decodes, and where it stops, is what the SDK's decoder would
// (TestGatedEventsDecodeAsTheSDK, for each SDK): lines end with "\n", one
// "\r" before it dropped; an empty line dispatches the event when it has
// data, or, with typeOnly (anthropic-sdk-go's rule), a type; else openai-go
// forgets its type; "event" sets the type, each "data" line adds its value
// and a "\n"; a comment or another field is skipped; an event the body ends
// in the middle of is dropped, and the body's error other than io.EOF is the
// stream's.
type gatedDecoder struct {
	b        *gatedBody
	rc       io.Closer // what Close closes: the response's body
	typeOnly bool
	typ      string
	data     []byte
	err      error
}

// next decodes the next event, waiting at the gate for it.
func (d *gatedDecoder) next() bool {
	if d.err != nil {
		return false
	}
	b := d.b
	event := ""
	var data []byte
	for {
		b.wait()
		if b.ready == 0 { // the body ended or failed inside an event, or between two
			if !errors.Is(b.err, io.EOF) {
				d.err = b.err
			}
			return false
		}
		seg := b.buf[b.off : b.off+b.ready]
		b.off += b.ready
		b.ready = 0
		for len(seg) > 0 {
			var line []byte
			line, seg, _ = cutLine(seg) // eventEnd ended seg with a whole line
			if len(line) == 0 {
				if len(data) == 0 && (!d.typeOnly || event == "") {
					event = ""
					continue
				}
				d.typ, d.data = event, data
				return true // eventEnd stopped seg at this line
			}
			name, value, _ := bytes.Cut(line, []byte(":"))
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
			switch string(name) {
			case "event":
				event = string(value)
			case "data":
				data = append(append(data, value...), '\n')
			}
		}
	}
}

func (d *gatedDecoder) Close() error { return d.rc.Close() }
func (d *gatedDecoder) Err() error   { return d.err }

// gatedEvents is gatedDecoder as openai-go's ssestream.Decoder.
type gatedEvents struct{ gatedDecoder }

func (d *gatedEvents) Next() bool             { return d.next() }
func (d *gatedEvents) Event() ssestream.Event { return ssestream.Event{Type: d.typ, Data: d.data} }

// gatedAnthropicEvents is gatedDecoder as anthropic-sdk-go's
// ssestream.Decoder.
type gatedAnthropicEvents struct{ gatedDecoder }

func (d *gatedAnthropicEvents) Next() bool { return d.next() }
func (d *gatedAnthropicEvents) Event() anthropicsse.Event {
	return anthropicsse.Event{Type: d.typ, Data: d.data}
}

// gatedEventStream is the content type gateMiddleware gives the response
// of a gated body. anthropic-sdk-go builds a stream's decoder inside
// NewStreaming, from its registry of decoders by content type, so this
// type is how its streams come to decode from the gate's buffer
// (newAnthropicGatedEvents); openai's are given theirs (newOpenAIChunks).
const gatedEventStream = "text/event-stream; parley-gate=1"

func init() { anthropicsse.RegisterDecoder(gatedEventStream, newAnthropicGatedEvents) }

// newAnthropicGatedEvents decodes a gated body from the gate's buffer, any
// other body as the SDK does.
func newAnthropicGatedEvents(rc io.ReadCloser) anthropicsse.Decoder {
	if b, ok := rc.(*gatedBody); ok {
		return &gatedAnthropicEvents{gatedDecoder{b: b, rc: rc, typeOnly: true}}
	}
	return anthropicsse.NewDecoder(&http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: rc})
}
