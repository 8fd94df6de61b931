package handlers

import (
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
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
		w.sendText("first, to reuse the buffer")
		viaText.Body.Reset()
		w.sendText(text)
		if got, want := viaText.Body.String(), viaMap.Body.String(); got != want {
			t.Errorf("sendText(%q) wrote %q, send wrote %q", text, got, want)
		}
	}
}
