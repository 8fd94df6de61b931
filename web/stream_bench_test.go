package web_test

// What an idle visitor stream (GET /chat/{slug}/stream) holds in the
// server (BENCHMARKS.md, "Live streams"). The streams are opened by raw TCP
// connections that write one request and read until the first status
// event, then sit: the client side holds a socket and no goroutine or
// buffer, so the memory that grows is the server's.
//
//	go test -run '^$' -bench BenchmarkIdleStreams -benchtime 1x ./web/
//
// PARLEY_BENCH_STREAMS sets how many streams are held at once (default
// 2,000; the target is 5,000 an instance);
// PARLEY_BENCH_STREAM_PROFILES=<dir> writes heap profiles and goroutine
// dumps before and while they are open (go tool pprof -base).

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net"
	"net/url"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/handlers/public"
	"github.com/parley/parley/web/webtest"
)

func BenchmarkIdleStreams(b *testing.B) {
	n := 2000
	if v, err := strconv.Atoi(os.Getenv("PARLEY_BENCH_STREAMS")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	slug := fmt.Sprintf("streams%d", time.Now().UnixNano()%1_000_000_000)
	store, srv, ts, ten := webtest.NewBench(b, parley.NewTenantInput{Slug: slug, Name: "Streams", Plan: "scale"})
	b.Cleanup(srv.Live.Close) // before ts.Close: the streams end
	// One conversation per stream, waiting for a person.
	// Each call's ids are its own (the run's nanoseconds in bytes 2-5): go
	// test calls a benchmark once with b.N 1 and again with -benchtime's
	// count, on the same database.
	run := uint32(time.Now().UnixNano())
	convs := make([]db.SeedConversation, n)
	for i := range convs {
		convs[i] = db.SeedConversation{SessionID: "s" + strconv.Itoa(i), Channel: "web", Status: parley.StatusEscalated,
			VisitorType: "human", FirstUserMessage: "Can a person help?", Locale: "en", CreatedAt: time.Now(),
			Messages: []db.SeedMessage{{Role: "user", Content: "Can a person help?"}}}
		convs[i].ID[0], convs[i].ID[1], convs[i].ID[15] = byte(i>>8), byte(i), 1
		convs[i].ID[2], convs[i].ID[3], convs[i].ID[4], convs[i].ID[5] = byte(run>>24), byte(run>>16), byte(run>>8), byte(run)
		convs[i].ID[6], convs[i].ID[8] = 0x40, 0x80
	}
	if _, err := store.CopySeedConversations(ctx, ten.ID, convs); err != nil {
		b.Fatal(err)
	}
	key, _ := auth.ParseKey(webtest.SecretKey)
	streamKey := public.StreamKey(key)
	addr := ts.Listener.Addr().String()
	open := func(i int) (net.Conn, error) {
		session := "s" + strconv.Itoa(i)
		mac := hmac.New(sha256.New, streamKey)
		mac.Write([]byte(ten.ID + ":" + session))
		token := base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(c, "GET /chat/%s/stream?sessionId=%s&token=%s HTTP/1.1\r\nHost: %s\r\n\r\n", slug, session, url.QueryEscape(token), addr)
		var got []byte
		buf := make([]byte, 512)
		for !bytes.Contains(got, []byte("event: status")) {
			k, err := c.Read(buf)
			if err != nil {
				c.Close()
				return nil, fmt.Errorf("stream %d: %w (%q)", i, err, got)
			}
			got = append(got, buf[:k]...)
		}
		return c, nil
	}
	// Warm up: the hub's connection, the pools, the first goroutines.
	for i := range 20 {
		c, err := open(i)
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
	settle()

	b.ResetTimer()
	before := inUse()
	profile := func(name string) {
		if dir := os.Getenv("PARLEY_BENCH_STREAM_PROFILES"); dir != "" {
			if f, err := os.Create(dir + "/" + name); err == nil {
				_ = pprof.WriteHeapProfile(f)
				f.Close()
			}
			if f, err := os.Create(dir + "/" + name + ".goroutines"); err == nil {
				_ = pprof.Lookup("goroutine").WriteTo(f, 1)
				f.Close()
			}
		}
	}
	profile("before.prof")
	conns := make([]net.Conn, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	next := make(chan int)
	for range 50 {
		wg.Go(func() {
			for i := range next {
				c, err := open(i)
				mu.Lock()
				conns[i] = c
				if err != nil && failed == nil {
					failed = err
				}
				mu.Unlock()
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if failed != nil {
		b.Fatal(failed)
	}
	if got := srv.Live.Subscribers(); got != n {
		b.Fatalf("%d subscribers, want %d", got, n)
	}
	during := inUse()
	profile("during.prof")
	b.StopTimer()
	for _, c := range conns {
		c.Close()
	}
	per := func(v int64) float64 { return float64(v) / float64(n) }
	heap, stack := per(during.heap-before.heap), per(during.stack-before.stack)
	b.ReportMetric((heap+stack)/1024, "KiB/stream")
	b.ReportMetric(heap/1024, "KiB/stream-heap")
	b.ReportMetric(stack/1024, "KiB/stream-stack")
	b.ReportMetric(per(during.goroutines-before.goroutines), "goroutines/stream")
	b.Logf("%d idle streams: %.1f KiB heap + %.1f KiB stack each, %.2f goroutines each", n, heap/1024, stack/1024,
		per(during.goroutines-before.goroutines))
}
