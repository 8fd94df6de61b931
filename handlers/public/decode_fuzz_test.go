package public

import (
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers/handlerstest"
)

// The chat request's decoder answers any input with a value or an error of
// the caller's (400 or 413), never a panic or an internal error; what it
// accepts is text PostgreSQL can store. Its seeds, one file an input, are
// under testdata/fuzz/FuzzDecodeChatRequest/; `go test -fuzz
// FuzzDecodeChatRequest ./handlers/public/` explores further.

func FuzzDecodeChatRequest(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeChatRequest(handlerstest.FuzzContext(body, ""))
		handlerstest.CallersError(t, err, parley.KindInvalid, parley.KindTooLarge)
		if err == nil {
			handlerstest.CleanValue(t, "message", req.Message)
			handlerstest.CleanValue(t, "sessionId", req.SessionID)
		}
	})
}
