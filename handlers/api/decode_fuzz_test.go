package api

import (
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers/handlerstest"
)

// The query parsers answer any input with a value or an error of the
// caller's (400), never a panic or an internal error. Their seeds, one file
// an input, are under testdata/fuzz/<name>/; `go test -fuzz
// FuzzSubmissionFilter ./handlers/api/` explores further.

func FuzzSubmissionFilter(f *testing.F) {
	f.Fuzz(func(t *testing.T, query string) {
		_, err := submissionFilter(handlerstest.FuzzContext(nil, query))
		handlerstest.CallersError(t, err, parley.KindInvalid)
	})
}
