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
// request's GetBody encodes the body again instead (sentBodyRequest), for
// the transport's retry of a request the server closed the connection under.
type sentBody struct{ b []byte }

func (s *sentBody) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
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

// middleware is an SDK's request middleware: openai-go's and
// anthropic-sdk-go's option.WithMiddleware both take it (gateMiddleware is
// one too).
type middleware = func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error)

// sentBodyRequest is the body of a request, encode's, as a sentBody, and
// the middleware that gives each attempt its length (the SDKs know the
// length of their own buffers only; without it the body would go chunked)
// and a GetBody that encodes it again. The SDKs' own retries are off
// (MaxRetries 0): they would send the first attempt's body, read already.
func sentBodyRequest(encode func() ([]byte, error)) (io.ReadCloser, middleware, error) {
	body, err := encode()
	if err != nil {
		return nil, nil, err
	}
	n := int64(len(body)) // the middleware keeps the length, not the bytes
	return &sentBody{b: body}, func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		req.ContentLength = n
		req.GetBody = func() (io.ReadCloser, error) {
			b, err := encode()
			return &sentBody{b: b}, err
		}
		return next(req)
	}, nil
}
