package llm

import (
	"io"
	"net/http"
)

// sentBody is a model request's JSON body that lets go of its bytes once
// they are read to the end. net/http's transport keeps a request until its
// response is read to the end, and the SDKs keep a body's bytes in the
// request for a retry (its GetBody): a streamed answer held its request's
// JSON, the prompt with the knowledge base's extracts, the history and the
// tools' schemas, for its whole length (BENCHMARKS.md, issue 41). The
// request's GetBody encodes the body again instead (bodyAgain), for the
// transport's retry of a request the server closed the connection under.
type sentBody struct{ b []byte }

func (s *sentBody) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		s.b = nil
		return 0, io.EOF
	}
	n := copy(p, s.b)
	if s.b = s.b[n:]; len(s.b) == 0 {
		s.b = nil
	}
	return n, nil
}

func (s *sentBody) Close() error {
	s.b = nil
	return nil
}

// sentAgain has the attempt req (an SDK's middleware sees each) send
// body, n bytes, as a sentBody of known length (the SDKs know the length of
// their own buffers only; without it the body would go chunked), with a
// GetBody that encodes it again with encode. The SDKs' own retries are off
// (MaxRetries 0): they would send the first attempt's body, read already.
func sentAgain(req *http.Request, n int, encode func() ([]byte, error)) {
	req.ContentLength = int64(n)
	req.GetBody = func() (io.ReadCloser, error) {
		b, err := encode()
		return &sentBody{b: b}, err
	}
}
