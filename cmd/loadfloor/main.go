// Command loadfloor is the yardstick of make bench-load (BENCHMARKS.md,
// issue 18): the least a chat server can do for a visitor's message and
// keep its one promise of durability. It takes Parley's chat request
// (POST /chat/{tenant}, {"message", "sessionId"}), stores the message with
// one INSERT committed to disk (PostgreSQL's default synchronous commit),
// then asks the model and relays its answer as Parley's events: a
// {"text"} event per chunk, the first sent at once, and {"done":true} at
// the end; with X-Agent-Model, one JSON envelope from a model asked without
// streaming. No gates, no rate limits, no session lease, no usage count, no
// history, no prompt, no SDK: what Parley adds to a first byte is its
// first byte minus this one's, measured in the same rounds, on the same
// machine, against the same model and cluster.
//
// With -reply it keeps Parley's second promise as well: the answer it
// relayed is stored with one more INSERT, committed to disk, before the
// {"done":true} event (or in the envelope's case before the envelope). That
// is the least a server can do that keeps both of the promises
// BENCHMARKS.md states for Parley; without it the floor stores no answer.
//
//	loadfloor -addr 127.0.0.1:8154 -db postgres://... -model http://127.0.0.1:8153/v1 [-reply]
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8154", "listen address")
	dbURL := flag.String("db", os.Getenv("DATABASE_URL"), "PostgreSQL URL (default $DATABASE_URL)")
	model := flag.String("model", "http://127.0.0.1:8153/v1", "the model's base URL (up to /v1)")
	// parley serve's pool unless PARLEY_DB_MAX_CONNS says (web.DefaultDBMaxConns):
	// four connections a core, from 8 to 20.
	conns := flag.Int("db-conns", min(20, max(8, 4*runtime.GOMAXPROCS(0))), "PostgreSQL connections at most (parley serve's PARLEY_DB_MAX_CONNS default)")
	reply := flag.Bool("reply", false, "store the answer too, committed to disk before the last event")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := pgxpool.ParseConfig(*dbURL)
	if err != nil {
		log.Fatalf("loadfloor: %v", err)
	}
	cfg.MaxConns = int32(*conns)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		log.Fatalf("loadfloor: %v", err)
	}
	defer pool.Close()
	if err := setup(ctx, pool); err != nil {
		log.Fatalf("loadfloor: %v", err)
	}
	srv := &http.Server{Addr: *addr, Handler: newFloor(pool, *model, modelClient(), *reply), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("loadfloor: %v", err)
	}
}

// modelClient keeps as many idle connections to the model as Parley's own
// (web.managedProvider), so that concurrent turns reuse them as Parley's
// do: http.DefaultClient keeps two, and at c50 the floor would dial the
// model for most of its turns while Parley does not.
func modelClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 128,
		IdleConnTimeout:     90 * time.Second,
	}}
}

// setup creates the floor's one table, if need be.
func setup(ctx context.Context, pool *pgxpool.Pool) error {
	_, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS loadfloor_messages (
		id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		session_id text NOT NULL,
		role text NOT NULL DEFAULT 'user',
		content text NOT NULL,
		created_at timestamptz NOT NULL DEFAULT now())`)
	if err != nil {
		return fmt.Errorf("creating loadfloor_messages: %w", err)
	}
	return nil
}

// floor serves the chat route and /healthz.
type floor struct {
	pool   *pgxpool.Pool
	model  string // .../v1
	client *http.Client
	reply  bool // store the answer before the last event (-reply)
}

func newFloor(pool *pgxpool.Pool, model string, client *http.Client, reply bool) http.Handler {
	f := &floor{pool: pool, model: model, client: client, reply: reply}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("POST /chat/{tenant}", f.chat)
	return mux
}

func (f *floor) chat(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Message   string `json:"message"`
		SessionID string `json:"sessionId"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&in); err != nil || in.Message == "" || in.SessionID == "" {
		http.Error(w, `{"error":"a JSON body with message and sessionId"}`, http.StatusBadRequest)
		return
	}
	if _, err := f.pool.Exec(r.Context(), `INSERT INTO loadfloor_messages (session_id, content) VALUES ($1, $2)`,
		in.SessionID, in.Message); err != nil {
		http.Error(w, `{"error":"storing the message"}`, http.StatusInternalServerError)
		return
	}
	stream := r.Header.Get("X-Agent-Model") == ""
	body, _ := json.Marshal(map[string]any{"model": "fake", "stream": stream,
		"messages": []map[string]string{{"role": "user", "content": in.Message}}})
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, f.model+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		http.Error(w, `{"error":"the model's address"}`, http.StatusInternalServerError)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.client.Do(req)
	if err != nil {
		http.Error(w, `{"error":"the model is unreachable"}`, http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		http.Error(w, `{"error":"the model refused"}`, http.StatusBadGateway)
		return
	}
	if !stream {
		var c struct {
			Choices []struct {
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || len(c.Choices) == 0 {
			http.Error(w, `{"error":"the model's answer"}`, http.StatusBadGateway)
			return
		}
		if !f.storeReply(r.Context(), in.SessionID, c.Choices[0].Message.Content) {
			http.Error(w, `{"error":"storing the reply"}`, http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"message": c.Choices[0].Message.Content, "done": true})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	first := true
	var answer strings.Builder
	// A line of the model's stream at a time: the scanner's own first
	// buffer (4 KiB), grown for a longer line up to 1 MiB. The floor held a
	// 64 KiB buffer for every open stream before (BENCHMARKS.md, issue 41),
	// more than the rest of what a stream holds.
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
		if !ok || bytes.Equal(line, []byte("[DONE]")) {
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if json.Unmarshal(line, &chunk) != nil || len(chunk.Choices) == 0 || chunk.Choices[0].Delta.Content == "" {
			continue
		}
		if f.reply {
			answer.WriteString(chunk.Choices[0].Delta.Content)
		}
		event, _ := json.Marshal(map[string]string{"text": chunk.Choices[0].Delta.Content})
		fmt.Fprintf(w, "data: %s\n\n", event)
		if first && flusher != nil {
			flusher.Flush()
			first = false
		}
	}
	if sc.Err() != nil {
		fmt.Fprint(w, "data: {\"error\":\"the model's stream broke\"}\n\n")
		return
	}
	if !f.storeReply(r.Context(), in.SessionID, answer.String()) {
		fmt.Fprint(w, "data: {\"error\":\"storing the reply\"}\n\n")
		return
	}
	fmt.Fprint(w, "data: {\"done\":true}\n\n")
}

// storeReply stores the answer of session's turn, committed to disk, when
// the floor keeps the reply's promise (-reply); it reports whether the turn
// may end with done.
func (f *floor) storeReply(ctx context.Context, session, answer string) bool {
	if !f.reply {
		return true
	}
	_, err := f.pool.Exec(ctx, `INSERT INTO loadfloor_messages (session_id, role, content) VALUES ($1, 'assistant', $2)`, session, answer)
	return err == nil
}
