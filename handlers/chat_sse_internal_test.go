package handlers

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley/agent"
)

// sendText writes the bytes send writes for {"text": ...}, whatever the
// text holds: quotes, HTML, control characters, invalid UTF-8.
func TestSSESendTextMatchesSend(t *testing.T) {
	e := echo.New()
	texts := []string{"", "Hello, ", `say "hi" \ <b>&</b>`, "line\nbreak\ttab\x00", "é 日本 \u2028", "bad \xff utf8"}
	for _, text := range texts {
		viaMap, viaText := httptest.NewRecorder(), httptest.NewRecorder()
		(&sseWriter{c: e.NewContext(nil, viaMap)}).send(map[string]string{"text": text})
		w := &sseWriter{c: e.NewContext(nil, viaText)}
		w.sendText("first, to reuse the buffer", true)
		viaText.Body.Reset()
		w.sendText(text, true)
		if got, want := viaText.Body.String(), viaMap.Body.String(); got != want {
			t.Errorf("sendText(%q) wrote %q, send wrote %q", text, got, want)
		}
	}
}

// The answer's first text is flushed at once, so that the visitor sees it
// start as soon as it can; a later text that more text follows
// (agent.Event.More) is written unflushed, to go with the next, and the
// next flushed one takes both.
func TestSSEChatWriterFlushesOnceForTextInHand(t *testing.T) {
	e := echo.New()
	rec := &flushCounter{ResponseRecorder: httptest.NewRecorder()}
	w := &chatWriter{c: e.NewContext(nil, rec), stream: true}
	w.emit(agent.Event{Kind: agent.EventReady})
	start := rec.flushes
	w.emit(agent.Event{Kind: agent.EventText, Text: "Hel", More: true})
	if rec.flushes != start+1 {
		t.Errorf("%d flushes for the first text, want 1", rec.flushes-start)
	}
	w.emit(agent.Event{Kind: agent.EventText, Text: "lo", More: true})
	w.emit(agent.Event{Kind: agent.EventText, Text: ",", More: true})
	if rec.flushes != start+1 {
		t.Errorf("%d flushes for later texts more text follows, want none", rec.flushes-start-1)
	}
	w.emit(agent.Event{Kind: agent.EventText, Text: "!"})
	if rec.flushes != start+2 {
		t.Errorf("%d flushes after the last text, want 1", rec.flushes-start-1)
	}
	if got := rec.Body.String(); !strings.HasSuffix(got, `data: {"text":"Hel"}`+"\n\n"+`data: {"text":"lo"}`+"\n\n"+`data: {"text":","}`+"\n\n"+`data: {"text":"!"}`+"\n\n") {
		t.Errorf("body %q", got)
	}
}

type flushCounter struct {
	*httptest.ResponseRecorder
	flushes int
}

func (f *flushCounter) Flush() { f.flushes++; f.ResponseRecorder.Flush() }
