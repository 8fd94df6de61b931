package handlers

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley/agent"
	"github.com/parley/parley/agent/outbound/llm"
)

// sendText writes the bytes send writes for {"text": ...}, whatever the
// text holds: quotes, HTML, control characters, invalid UTF-8.
func TestSSESendTextMatchesSend(t *testing.T) {
	e := echo.New()
	texts := []string{"", "Hello, ", `say "hi" \ <b>&</b>`, "line\nbreak\ttab\x00", "é 日本 \u2028", "bad \xff utf8"}
	for _, text := range texts {
		viaMap, viaText := httptest.NewRecorder(), httptest.NewRecorder()
		(&SSEWriter{c: e.NewContext(nil, viaMap)}).Send(map[string]string{"text": text})
		w := &SSEWriter{c: e.NewContext(nil, viaText)}
		w.sendText("first, to reuse the buffer", flushNow)
		viaText.Body.Reset()
		w.sendText(text, flushNow)
		if got, want := viaText.Body.String(), viaMap.Body.String(); got != want {
			t.Errorf("sendText(%q) wrote %q, send wrote %q", text, got, want)
		}
	}
}

// The answer's first text is flushed at once, so that the visitor sees it
// start as soon as it can; a later text that more text follows
// (llm.Event.More) is written unflushed, to go with the next; a later
// text is flushed once the last flush is textFlushEvery old, at once or by
// a timer; the final event is left, with whatever waits, for the
// response's end, and nothing is flushed once the handler returned.
func TestSSEChatWriterPacesItsFlushes(t *testing.T) {
	e := echo.New()
	rec := &flushCounter{ResponseRecorder: httptest.NewRecorder()}
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	type armed struct {
		after time.Duration
		fire  func()
	}
	var timers []armed
	w := &ChatWriter{c: e.NewContext(httptest.NewRequest("POST", "/chat/x", nil), rec), stream: true}
	w.Emit(llm.Event{Kind: agent.EventReady})
	w.sse.now = func() time.Time { return now }
	w.sse.afterFunc = func(d time.Duration, f func()) *time.Timer {
		timers = append(timers, armed{d, f})
		return time.AfterFunc(time.Hour, func() {})
	}
	flushes := func(want int, when string) {
		t.Helper()
		if rec.flushes != want {
			t.Errorf("%s: %d flushes, want %d", when, rec.flushes, want)
		}
	}
	start := rec.flushes
	w.Emit(llm.Event{Kind: llm.EventText, Text: "Hel", More: true})
	flushes(start+1, "the first text, more following")
	w.Emit(llm.Event{Kind: llm.EventText, Text: "lo", More: true})
	now = now.Add(time.Millisecond)
	w.Emit(llm.Event{Kind: llm.EventText, Text: ","})
	flushes(start+1, "later texts within the interval")
	if len(timers) != 1 || timers[0].after != textFlushEvery-time.Millisecond {
		t.Fatalf("timers %+v, want one for the rest of the interval, %v", timers, textFlushEvery-time.Millisecond)
	}
	w.Emit(llm.Event{Kind: llm.EventText, Text: " you"})
	if len(timers) != 1 {
		t.Errorf("%d timers, want the one armed", len(timers))
	}
	now = now.Add(textFlushEvery)
	timers[0].fire()
	flushes(start+2, "the paced flush")
	timers[0].fire() // a second firing finds nothing to flush
	flushes(start+2, "a paced flush with nothing written")

	// Past the interval, a text goes out at once.
	now = now.Add(textFlushEvery)
	w.Emit(llm.Event{Kind: llm.EventText, Text: " there"})
	flushes(start+3, "a text past the interval")
	// Within it again: left for a timer, which the final event stops.
	w.Emit(llm.Event{Kind: llm.EventText, Text: "!"})
	flushes(start+3, "a text within the interval")
	out := &agent.TurnOutput{Result: agent.TurnResult{Text: "Hello, you there!"}, ConversationID: "c1"}
	w.in = &agent.TurnInput{SessionID: "s1"}
	if err := w.Finish(out, nil); err != nil {
		t.Fatal(err)
	}
	flushes(start+3, "the final event, left for the response's end")
	body := rec.Body.String()
	timers[len(timers)-1].fire()
	flushes(start+3, "a timer firing after the handler returned")
	if rec.Body.String() != body {
		t.Errorf("written after the handler returned: %q", strings.TrimPrefix(rec.Body.String(), body))
	}
	want := `data: {"text":"Hel"}` + "\n\n" + `data: {"text":"lo"}` + "\n\n" + `data: {"text":","}` + "\n\n" +
		`data: {"text":" you"}` + "\n\n" + `data: {"text":" there"}` + "\n\n" + `data: {"text":"!"}` + "\n\n" + `data: {"done":true`
	if !strings.Contains(body, want) {
		t.Errorf("body %q, want it to hold %q", body, want)
	}
}

type flushCounter struct {
	*httptest.ResponseRecorder
	flushes int
}

func (f *flushCounter) Flush() { f.flushes++; f.ResponseRecorder.Flush() }
