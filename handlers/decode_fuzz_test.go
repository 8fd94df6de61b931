package handlers

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
)

// The decoders and query parsers answer any input with a value or an error
// of the caller's (400 or 413), never a panic or an internal error; what
// they accept is text PostgreSQL can store. Their seeds, one file an input,
// are under testdata/fuzz/<name>/; `go test -fuzz FuzzDecodeObject ./handlers/`
// explores further.

// fuzzContext is an Echo context of a request with body and query.
func fuzzContext(body []byte, query string) echo.Context {
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.URL.RawQuery = query
	req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	return echo.New().NewContext(req, httptest.NewRecorder())
}

// callersError fails t unless err is nil or an error of the caller's.
func callersError(t *testing.T, err error, kinds ...parley.Kind) {
	t.Helper()
	if err == nil {
		return
	}
	kind := parley.ErrorKind(err)
	for _, k := range kinds {
		if kind == k {
			return
		}
	}
	t.Fatalf("error of kind %d: %v", kind, err)
}

// cleanValue fails t when a decoded value holds a string that is not valid
// UTF-8 or holds a NUL.
func cleanValue(t *testing.T, where string, v any) {
	t.Helper()
	switch v := v.(type) {
	case string:
		if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
			t.Fatalf("%s: decoded %q", where, v)
		}
	case *string:
		if v != nil {
			cleanValue(t, where, *v)
		}
	case []string:
		for _, s := range v {
			cleanValue(t, where, s)
		}
	case []any:
		for _, s := range v {
			cleanValue(t, where, s)
		}
	case map[string]any:
		for k, s := range v {
			cleanValue(t, where, k)
			cleanValue(t, where, s)
		}
	}
}

// fuzzBody is a struct of every kind of field the handlers decode into.
type fuzzBody struct {
	Name     string         `json:"name"`
	Optional *string        `json:"optional"`
	List     []string       `json:"list"`
	Metadata map[string]any `json:"metadata"`
	Count    int            `json:"count"`
	Active   *bool          `json:"active"`
	Anything any            `json:"anything"`
}

func FuzzDecodeObject(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		raw, err := DecodeObject(fuzzContext(body, ""), 1<<16)
		callersError(t, err, parley.KindInvalid, parley.KindTooLarge)
		if err != nil {
			return
		}
		var dst fuzzBody
		errs := decodeFields(raw, &dst)
		for name, v := range map[string]any{"name": dst.Name, "optional": dst.Optional, "list": dst.List,
			"metadata": dst.Metadata, "anything": dst.Anything} {
			if _, bad := errs[name]; !bad {
				cleanValue(t, name, v)
			}
		}
	})
}

func FuzzDecodeChatRequest(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeChatRequest(fuzzContext(body, ""))
		callersError(t, err, parley.KindInvalid, parley.KindTooLarge)
		if err == nil {
			cleanValue(t, "message", req.Message)
			cleanValue(t, "sessionId", req.SessionID)
		}
	})
}

func FuzzSubmissionFilter(f *testing.F) {
	f.Fuzz(func(t *testing.T, query string) {
		_, err := submissionFilter(fuzzContext(nil, query))
		callersError(t, err, parley.KindInvalid)
	})
}
