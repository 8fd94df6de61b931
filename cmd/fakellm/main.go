// Command fakellm is a zero-latency OpenAI-compatible chat completions
// server for the load benchmark (make bench-load, BENCHMARKS.md): every
// answer is the same text, streamed as -chunks server-sent events the way
// OpenAI streams them, or sent as one completion when the request does not
// ask for a stream. It runs as a process of its own, so that Parley reaches
// its model over the network as it does in production.
//
//	fakellm -addr 127.0.0.1:8153 -chunks 50
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8153", "listen address")
	chunks := flag.Int("chunks", 50, "content chunks per streamed answer")
	flag.Parse()
	if *chunks < 1 {
		log.Fatal("fakellm: -chunks must be at least 1")
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("fakellm: %v", err)
	}
	srv := &http.Server{Handler: newHandler(*chunks), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Printf("fakellm listening on http://%s/v1\n", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("fakellm: %v", err)
	}
}

// Word is each chunk's content: an answer of n chunks is Word repeated n times.
const Word = "word "

// Answer is the whole text of an answer of n chunks.
func Answer(n int) string { return strings.Repeat(Word, n) }

type request struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// newHandler answers POST /v1/chat/completions (and /chat/completions).
func newHandler(chunks int) http.Handler {
	roleChunk := chunkEvent(`{"role":"assistant","content":""}`, "null")
	wordChunk := chunkEvent(fmt.Sprintf(`{"content":%q}`, Word), "null")
	stopChunk := chunkEvent(`{}`, `"stop"`)
	usageChunk := []byte(fmt.Sprintf(`data: {"id":"chatcmpl-fake","object":"chat.completion.chunk","created":1700000000,"model":"fake","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n", chunks, 100+chunks))
	done := []byte("data: [DONE]\n\n")
	mux := http.NewServeMux()
	complete := func(w http.ResponseWriter, r *http.Request) {
		var req request
		if err := json.NewDecoder(io.LimitReader(r.Body, 8<<20)).Decode(&req); err != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error"}}`, "invalid JSON body: "+err.Error())
			return
		}
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"id":"chatcmpl-fake","object":"chat.completion","created":1700000000,"model":"fake",`+
				`"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],`+
				`"usage":{"prompt_tokens":100,"completion_tokens":%d,"total_tokens":%d}}`, Answer(chunks), chunks, 100+chunks)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		f, _ := w.(http.Flusher)
		flush := func() {
			if f != nil {
				f.Flush()
			}
		}
		_, _ = w.Write(roleChunk)
		flush()
		for range chunks {
			if _, err := w.Write(wordChunk); err != nil {
				return
			}
			flush()
		}
		_, _ = w.Write(stopChunk)
		if req.StreamOptions.IncludeUsage {
			_, _ = w.Write(usageChunk)
		}
		_, _ = w.Write(done)
		flush()
	}
	mux.HandleFunc("POST /v1/chat/completions", complete)
	mux.HandleFunc("POST /chat/completions", complete)
	return mux
}

// chunkEvent is one SSE event carrying a chat.completion.chunk.
func chunkEvent(delta, finish string) []byte {
	return fmt.Appendf(nil, `data: {"id":"chatcmpl-fake","object":"chat.completion.chunk","created":1700000000,"model":"fake",`+
		`"choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}]}`+"\n\n", delta, finish)
}
