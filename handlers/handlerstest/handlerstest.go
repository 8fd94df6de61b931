// Package handlerstest holds what the surfaces' tests share: the fuzz tests'
// requests and checks of the decoders and query parsers.
package handlerstest

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

// FuzzContext is an Echo context of a request with body and query.
func FuzzContext(body []byte, query string) echo.Context {
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.URL.RawQuery = query
	req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	return echo.New().NewContext(req, httptest.NewRecorder())
}

// CallersError fails t unless err is nil or an error of the caller's.
func CallersError(t *testing.T, err error, kinds ...parley.Kind) {
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

// CleanValue fails t when a decoded value holds a string that is not valid
// UTF-8 or holds a NUL.
func CleanValue(t *testing.T, where string, v any) {
	t.Helper()
	switch v := v.(type) {
	case string:
		if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
			t.Fatalf("%s: decoded %q", where, v)
		}
	case *string:
		if v != nil {
			CleanValue(t, where, *v)
		}
	case []string:
		for _, s := range v {
			CleanValue(t, where, s)
		}
	case []any:
		for _, s := range v {
			CleanValue(t, where, s)
		}
	case map[string]any:
		for k, s := range v {
			CleanValue(t, where, k)
			CleanValue(t, where, s)
		}
	}
}
