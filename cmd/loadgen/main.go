// Command loadgen drives the load benchmark of make bench-load
// (scripts/bench-load.sh, BENCHMARKS.md "Chat as users run it"): it sends
// chat turns to a running `parley serve` and, for comparison, the same
// exchange straight to its model, in interleaved rounds, and prints latency,
// throughput, errors, the turns persisted, CPU per turn of parley and of
// PostgreSQL, and statements per turn.
//
// Modes: first (each turn a visitor's first message, a new session from its
// own X-Forwarded-For address, streamed as SSE), agent (the same with
// X-Agent-Model, answered as one JSON envelope), session (ten turns per
// session, one address per session) and widget (sessions as session's,
// each message with its browser's anonymous id, as the widget sends it:
// one anonymous visitor a session).
//
// Two builds, or two schemas, are compared in one run by giving -parley,
// -db and -parley-pid a value for each server (comma-separated, in the same
// order; -names labels them): every round then measures the model direct
// and each server in turn, the order of the servers turning from one round
// to the next, so that the machine's slower and faster minutes fall on
// each alike, and the run ends with each figure of the other servers as a
// ratio to the first's, round by round (scripts/bench-load.sh with
// BENCH_PARLEY_BIN_B or BENCH_SQL_B).
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

type config struct {
	modelURL, tenant                   string
	modelPID                           int
	targets                            []*target // the Parley servers measured
	modes                              []string
	concs                              []int
	n, rounds, warmup, perSession, top int
	settle                             time.Duration
}

func main() {
	var c config
	var modes, concs, urls, dbs, pids, names string
	flag.StringVar(&urls, "parley", "http://127.0.0.1:8152", "Parley's base URL; comma-separated to compare servers")
	flag.StringVar(&c.modelURL, "model", "http://127.0.0.1:8153/v1", "the model's base URL (up to /v1)")
	flag.StringVar(&c.tenant, "tenant", "load", "tenant slug")
	flag.StringVar(&dbs, "db", "", "Parley's database URL (persisted turns, statements, PostgreSQL's CPU); one for each -parley, comma-separated")
	flag.StringVar(&pids, "parley-pid", "", "pid of parley serve, for its CPU time; one for each -parley, comma-separated")
	flag.StringVar(&names, "names", "", "labels of the -parley servers, comma-separated (default: Parley for one, A, B, ... for more)")
	flag.IntVar(&c.modelPID, "model-pid", 0, "pid of the model server, for its CPU time")
	flag.StringVar(&modes, "modes", "first,agent,session", "comma-separated: first, agent, session")
	flag.StringVar(&concs, "conc", "1,50", "comma-separated concurrencies")
	flag.IntVar(&c.n, "n", 1000, "requests per measurement")
	flag.IntVar(&c.rounds, "rounds", 3, "interleaved rounds")
	flag.IntVar(&c.warmup, "warmup", 2000, "requests of each mode before the first round, not measured (at most 40 a unit of the highest concurrency)")
	flag.IntVar(&c.perSession, "per-session", 10, "turns per session in session mode")
	flag.IntVar(&c.top, "top", 15, "at the end, the statements PostgreSQL ran most often during the run (pg_stat_statements), this many")
	flag.DurationVar(&c.settle, "settle", 1100*time.Millisecond, "wait after a measurement before reading PostgreSQL's statistics (flushed about once a second)")
	flag.Parse()
	c.modes = strings.Split(modes, ",")
	for _, m := range c.modes {
		if m != "first" && m != "agent" && m != "session" && m != "widget" {
			fail(fmt.Errorf("-modes: %q is not first, agent, session or widget", m))
		}
	}
	for _, s := range strings.Split(concs, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fail(fmt.Errorf("-conc: %q is not a positive integer", s))
		}
		c.concs = append(c.concs, n)
	}
	if c.n < 1 || c.rounds < 1 || c.perSession < 1 {
		fail(errors.New("-n, -rounds and -per-session must be positive"))
	}
	var err error
	if c.targets, err = parseTargets(urls, dbs, pids, names); err != nil {
		fail(err)
	}
	if err := run(context.Background(), c, os.Stdout); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "loadgen:", err)
	os.Exit(1)
}

// target is one Parley server measured: its URL, and optionally its
// database (for the persisted turns, statements and commits) and its pid.
type target struct {
	name, url, dbURL string
	pid              int
	conn             *pgx.Conn
}

// parseTargets pairs the comma-separated values of -parley, -db,
// -parley-pid and -names: as many of each as of -parley, or none.
func parseTargets(urls, dbs, pids, names string) ([]*target, error) {
	split := func(v string) []string {
		if strings.TrimSpace(v) == "" {
			return nil
		}
		parts := strings.Split(v, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return parts
	}
	us, ds, ps, ns := split(urls), split(dbs), split(pids), split(names)
	if len(us) == 0 {
		return nil, errors.New("-parley: no URL")
	}
	for flag, v := range map[string][]string{"-db": ds, "-parley-pid": ps, "-names": ns} {
		if len(v) != 0 && len(v) != len(us) {
			return nil, fmt.Errorf("%s: %d values for %d -parley servers", flag, len(v), len(us))
		}
	}
	seen := map[string]bool{"direct": true}
	var ts []*target
	for i, u := range us {
		t := &target{url: strings.TrimRight(u, "/"), name: "Parley"}
		if len(us) > 1 {
			t.name = string(rune('A' + i))
		}
		if ns != nil {
			t.name = ns[i]
		}
		if t.name == "" || seen[t.name] {
			return nil, fmt.Errorf("-names: %q is empty, taken, or \"direct\"", t.name)
		}
		seen[t.name] = true
		if ds != nil {
			t.dbURL = ds[i]
		}
		if ps != nil && ps[i] != "" {
			n, err := strconv.Atoi(ps[i])
			if err != nil || n < 1 {
				return nil, fmt.Errorf("-parley-pid: %q is not a pid", ps[i])
			}
			t.pid = n
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// key names one figure: mode, concurrency and target ("direct" or a
// server's name).
type key struct {
	mode   string
	conc   int
	target string
}

// figures gathers each figure's values over the rounds.
type figures map[key]map[string]Span

func (f figures) add(k key, name string, v float64) {
	if f[k] == nil {
		f[k] = map[string]Span{}
	}
	f[k][name] = append(f[k][name], v)
}

func run(ctx context.Context, c config, out io.Writer) error {
	lg := &loadgen{config: c, client: &http.Client{Transport: &http.Transport{
		MaxIdleConns: 4096, MaxIdleConnsPerHost: 4096, DisableCompression: true, IdleConnTimeout: 90 * time.Second,
	}}}
	for i, t := range c.targets {
		if t.dbURL == "" {
			continue
		}
		conn, err := pgx.Connect(ctx, t.dbURL)
		if err != nil {
			return fmt.Errorf("connecting to the database of %s: %w", t.name, err)
		}
		defer conn.Close(ctx)
		t.conn = conn
		if _, err := lg.statements(ctx, t); err != nil {
			fmt.Fprintf(out, "statements per turn of %s: pg_stat_statements unavailable (%v)\n", t.name, err)
		}
		if i > 0 && lg.postmaster > 0 {
			continue
		}
		var backend int
		if err := conn.QueryRow(ctx, `/* loadgen */ SELECT pg_backend_pid()`).Scan(&backend); err != nil {
			return err
		}
		if s, err := readStat(backend); err == nil {
			lg.postmaster = s.ppid
		}
		var fsync, syncCommit, buffers, preload string
		_ = conn.QueryRow(ctx, `/* loadgen */ SELECT current_setting('fsync'), current_setting('synchronous_commit'),
			current_setting('shared_buffers'), current_setting('shared_preload_libraries')`).Scan(&fsync, &syncCommit, &buffers, &preload)
		fmt.Fprintf(out, "postgres: fsync=%s synchronous_commit=%s shared_buffers=%s shared_preload_libraries=%q\n", fsync, syncCommit, buffers, preload)
	}
	// The warm-up brings each server to the state of one that has run for
	// a while: its pools full, and every pooled PostgreSQL connection past
	// the five executions of a prepared statement that PostgreSQL plans for
	// their parameters before it keeps one plan. At c50 Parley writes about
	// thirteen turns' messages in one statement, on any of its pooled
	// connections: 200 turns of warm-up left most connections planning those
	// statements afresh in the rounds, some 5 ms each, a tenth of
	// PostgreSQL's CPU a turn in a round of 3,000 (BENCHMARKS.md, issue 41),
	// which a server running for more than a minute no longer pays.
	for _, m := range c.modes {
		w := min(c.warmup, 40*max(c.concs[len(c.concs)-1], 1))
		if w > 0 {
			lg.measure(ctx, m, c.concs[len(c.concs)-1], w, nil)
			for _, t := range c.targets {
				lg.measure(ctx, m, c.concs[len(c.concs)-1], w, t)
			}
		}
	}
	figs := figures{}
	topBefore := map[*target]map[string]int64{}
	for _, t := range c.targets {
		if t.conn != nil && c.top > 0 {
			topBefore[t], _ = lg.statementCalls(ctx, t)
		}
	}
	for r := 1; r <= c.rounds; r++ {
		fmt.Fprintf(out, "\nround %d, load average %s\n", r, loadAverage())
		for _, m := range c.modes {
			for _, conc := range c.concs {
				res := lg.round(ctx, m, conc, nil)
				res.print(out)
				res.record(figs)
				for _, t := range roundOrder(c.targets, r) {
					res := lg.round(ctx, m, conc, t)
					res.print(out)
					res.record(figs)
				}
			}
		}
	}
	printTable(out, c, figs)
	if len(c.targets) > 1 {
		printComparison(out, c, figs)
	}
	for _, t := range c.targets {
		if before := topBefore[t]; before != nil {
			if after, err := lg.statementCalls(ctx, t); err == nil {
				printTop(out, t, before, after, c.top)
			}
		}
	}
	return nil
}

// roundOrder is the order of the servers in round r (from 1): turned by
// one each round, so that each comes first, and last, as often as the
// others over a multiple of their number of rounds.
func roundOrder(ts []*target, r int) []*target {
	k := (r - 1) % len(ts)
	return append(slices.Clone(ts[k:]), ts[:k]...)
}

// statementCalls is the calls of each statement of this database by
// pg_stat_statements, loadgen's own left out.
func (lg *loadgen) statementCalls(ctx context.Context, t *target) (map[string]int64, error) {
	rows, _ := t.conn.Query(ctx, `/* loadgen */ SELECT query, sum(calls)::bigint FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%loadgen%' GROUP BY query`)
	out := map[string]int64{}
	var q string
	var n int64
	_, err := pgx.ForEachRow(rows, []any{&q, &n}, func() error { out[q] = n; return nil })
	return out, err
}

// printTop prints the n statements called most often between two readings.
func printTop(out io.Writer, t *target, before, after map[string]int64, n int) {
	type call struct {
		query string
		n     int64
	}
	var calls []call
	var total int64
	for q, a := range after {
		if d := a - before[q]; d > 0 {
			calls = append(calls, call{q, d})
			total += d
		}
	}
	slices.SortFunc(calls, func(a, b call) int { return cmp.Compare(b.n, a.n) })
	fmt.Fprintf(out, "\nstatements in the database of %s during the rounds (pg_stat_statements, background jobs included): %d, the %d most frequent:\n", t.name, total, min(n, len(calls)))
	for _, c := range calls[:min(n, len(calls))] {
		fmt.Fprintf(out, "%9d  %.150s\n", c.n, strings.Join(strings.Fields(c.query), " "))
	}
}

type loadgen struct {
	config
	client     *http.Client
	postmaster int
	addrSeq    atomic.Int64
	sessionSeq atomic.Int64
	runID      string
}

// address is a client address no other visitor of the run has: the
// per-address rate limit (20 messages a minute) applies to each visitor
// alone, as when visitors come from their own connections.
func (lg *loadgen) address() string {
	n := lg.addrSeq.Add(1)
	return fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255)
}

// anonymousID is the widget's anonymous id of the browser that holds
// session (parley.ValidAnonymousID): one for each session of a run.
func anonymousID(session string) string {
	sum := sha256.Sum256([]byte(session))
	return "anon_" + hex.EncodeToString(sum[:16])
}

func (lg *loadgen) session() string {
	if lg.runID == "" {
		lg.runID = strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	return fmt.Sprintf("load-%s-%d", lg.runID, lg.sessionSeq.Add(1))
}

// result is one measurement with what was counted around it.
type result struct {
	mode   string
	conc   int
	direct bool
	t      *target // nil when direct
	sum    Summary
	// Parley only; negative when not measured.
	persisted, conversations   int64
	parleyCPU, pgCPU, modelCPU time.Duration
	statements, commits, syncs int64
	haveDB, haveStatements     bool
}

// round measures n requests of mode at conc, through t or straight to the
// model when t is nil, with the counters read around it.
func (lg *loadgen) round(ctx context.Context, mode string, conc int, t *target) result {
	r := result{mode: mode, conc: conc, direct: t == nil, t: t}
	before := lg.snapshot(ctx, t)
	r.sum = lg.measure(ctx, mode, conc, lg.n, t)
	cpuAfter := lg.cpu(t)
	time.Sleep(lg.settle)
	after := lg.snapshot(ctx, t)
	r.parleyCPU = cpuAfter.parley - before.cpu.parley
	r.pgCPU = cpuAfter.pg - before.cpu.pg
	r.modelCPU = cpuAfter.model - before.cpu.model
	if before.ok && after.ok {
		r.haveDB = true
		r.persisted, r.conversations = after.replies-before.replies, after.conversations-before.conversations
		r.commits, r.syncs = after.commits-before.commits, after.syncs-before.syncs
	}
	if before.stmtOK && after.stmtOK {
		r.haveStatements = true
		r.statements = after.statements - before.statements
	}
	return r
}

type cpuTimes struct{ parley, pg, model time.Duration }

// cpu reads the CPU times of target's server (none when nil), of the model
// and of the whole PostgreSQL cluster.
func (lg *loadgen) cpu(target *target) cpuTimes {
	var t cpuTimes
	if target != nil && target.pid > 0 {
		t.parley, _ = processCPU(target.pid)
	}
	if lg.modelPID > 0 {
		t.model, _ = processCPU(lg.modelPID)
	}
	if lg.postmaster > 0 {
		t.pg, _ = treeCPU(lg.postmaster)
	}
	return t
}

type snapshot struct {
	cpu                                    cpuTimes
	replies, conversations, commits, syncs int64
	statements                             int64
	ok, stmtOK                             bool
}

func (lg *loadgen) snapshot(ctx context.Context, t *target) snapshot {
	s := snapshot{cpu: lg.cpu(t)}
	if t == nil || t.conn == nil {
		return s
	}
	err := t.conn.QueryRow(ctx, `/* loadgen */ SELECT
		(SELECT count(*) FROM messages m JOIN tenants t ON t.id = m.tenant_id WHERE t.slug = $1 AND m.role = 'assistant'),
		(SELECT count(*) FROM conversations c JOIN tenants t ON t.id = c.tenant_id WHERE t.slug = $1),
		(SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()),
		(SELECT wal_sync FROM pg_stat_wal)`, lg.tenant).Scan(&s.replies, &s.conversations, &s.commits, &s.syncs)
	s.ok = err == nil
	s.statements, err = lg.statements(ctx, t)
	s.stmtOK = err == nil
	return s
}

// statements is the number of statements this database has run, loadgen's
// own left out (pg_stat_statements, with utility statements such as BEGIN
// and COMMIT).
func (lg *loadgen) statements(ctx context.Context, t *target) (int64, error) {
	var n int64
	err := t.conn.QueryRow(ctx, `/* loadgen */ SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%loadgen%'`).Scan(&n)
	return n, err
}

// measure sends n requests of mode over conc workers, to t or straight to
// the model when t is nil, and summarizes them.
func (lg *loadgen) measure(ctx context.Context, mode string, conc, n int, t *target) Summary {
	samples := make([]Sample, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range conc {
		wg.Go(func() {
			var session, addr string
			sent := 0
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if mode != "session" && mode != "widget" || sent%lg.perSession == 0 {
					session, addr = lg.session(), lg.address()
				}
				sent++
				samples[i] = lg.request(ctx, mode, t, session, addr)
			}
		})
	}
	wg.Wait()
	return Summarize(samples, time.Since(start))
}

const message = "Hello, what do you sell?"

func (lg *loadgen) request(ctx context.Context, mode string, t *target, session, addr string) Sample {
	var url, body string
	hdr := http.Header{"Content-Type": {"application/json"}}
	streamed, direct := mode != "agent", t == nil
	if direct {
		url = lg.modelURL + "/chat/completions"
		body = fmt.Sprintf(`{"model":"fake","stream":%t,"messages":[{"role":"user","content":%q}]}`, streamed, message)
	} else {
		url = t.url + "/chat/" + lg.tenant
		body = fmt.Sprintf(`{"message":%q,"sessionId":%q}`, message, session)
		if mode == "widget" {
			body = fmt.Sprintf(`{"message":%q,"sessionId":%q,"anonymousId":%q}`, message, session, anonymousID(session))
		}
		hdr.Set("X-Forwarded-For", addr)
		if mode == "agent" {
			hdr.Set("X-Agent-Model", "loadgen-agent")
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return Sample{Err: err}
	}
	req.Header = hdr
	start := time.Now()
	resp, err := lg.client.Do(req)
	if err != nil {
		return Sample{Err: err, Kind: "no HTTP response"}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 500))
		kind := fmt.Sprintf("status %d", resp.StatusCode)
		if resp.Header.Get("Retry-After") != "" {
			kind += " with Retry-After"
		}
		return Sample{Err: fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(raw)), Kind: kind}
	}
	var s Sample
	if streamed {
		s.TTFB, err = readStream(resp.Body, start, direct)
	} else {
		s.TTFB, err = readWhole(resp.Body, start)
	}
	s.Total = time.Since(start)
	s.Err = err
	if err != nil {
		s.Kind = "answer cut or failed"
	}
	return s
}

// readStream reads an SSE answer to its end and returns the time to its
// first data line. The last data line must end the answer: [DONE] from the
// model, the event with "done":true from Parley.
func readStream(body io.Reader, start time.Time, direct bool) (time.Duration, error) {
	r := bufio.NewReader(body)
	var ttfb time.Duration
	var last []byte
	inData, continued := false, false // in a data line; this read continues a line longer than the buffer
	for {
		line, err := r.ReadSlice('\n')
		switch {
		case continued && inData:
			last = append(last, line...)
		case !continued:
			inData = bytes.HasPrefix(line, []byte("data:"))
			if inData {
				if ttfb == 0 {
					ttfb = time.Since(start)
				}
				last = append(last[:0], line...)
			}
		}
		continued = errors.Is(err, bufio.ErrBufferFull)
		if err == io.EOF {
			break
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return ttfb, err
		}
	}
	switch {
	case ttfb == 0:
		return 0, errors.New("no data event")
	case direct && !bytes.Contains(last, []byte("[DONE]")), !direct && !bytes.Contains(last, []byte(`"done":true`)):
		return ttfb, fmt.Errorf("the stream ended without its last event: %.200s", last)
	}
	return ttfb, nil
}

// readWhole reads a JSON answer and returns the time to its first byte.
func readWhole(body io.Reader, start time.Time) (time.Duration, error) {
	var first [1]byte
	if _, err := io.ReadFull(body, first[:]); err != nil {
		return 0, err
	}
	ttfb := time.Since(start)
	rest, err := io.ReadAll(body)
	if err != nil {
		return ttfb, err
	}
	if first[0] != '{' || !bytes.Contains(rest, []byte(`"message":"word`)) && !bytes.Contains(rest, []byte(`"content":"word`)) {
		return ttfb, fmt.Errorf("not the expected answer: %.200s", append(first[:], rest...))
	}
	return ttfb, nil
}

func (r result) target() string {
	if r.direct {
		return "direct"
	}
	return r.t.name
}

func (r result) print(out io.Writer) {
	s := r.sum
	fmt.Fprintf(out, "%-7s c%-3d %-8s n=%d errors=%d ttfb p50 %s p99 %s ms, turn p50 %s p99 %s ms, %.0f turns/s",
		r.mode, r.conc, r.target(), s.N, s.Errors, ms(s.TTFB50), ms(s.TTFB99), ms(s.Turn50), ms(s.Turn99), s.PerSecond)
	ok := float64(s.N - s.Errors)
	if !r.direct && ok > 0 {
		if r.haveDB {
			fmt.Fprintf(out, ", persisted %d (%.0f/s, conversations +%d)", r.persisted, float64(r.persisted)/s.Elapsed.Seconds(), r.conversations)
		}
		fmt.Fprintf(out, ", CPU ms/turn parley %.2f postgres %.2f model %.2f", perTurn(r.parleyCPU, ok), perTurn(r.pgCPU, ok), perTurn(r.modelCPU, ok))
		if r.haveStatements {
			fmt.Fprintf(out, ", statements/turn %.1f", float64(r.statements)/ok)
		}
		if r.haveDB {
			fmt.Fprintf(out, ", commits/turn %.1f, WAL syncs/turn %.1f", float64(r.commits)/ok, float64(r.syncs)/ok)
		}
	} else if r.direct && ok > 0 {
		fmt.Fprintf(out, ", CPU ms/turn model %.2f", perTurn(r.modelCPU, ok))
	}
	fmt.Fprintln(out)
	if s.Errors > 0 {
		kinds := make([]string, 0, len(s.ErrorKinds))
		for k, n := range s.ErrorKinds {
			kinds = append(kinds, fmt.Sprintf("%s: %d", k, n))
		}
		slices.Sort(kinds)
		fmt.Fprintf(out, "        errors by kind: %s; first error: %.300s\n", strings.Join(kinds, ", "), s.FirstError)
	}
}

func perTurn(d time.Duration, turns float64) float64 {
	return float64(d) / float64(time.Millisecond) / turns
}

func (r result) record(f figures) {
	k := key{r.mode, r.conc, r.target()}
	s := r.sum
	ok := float64(s.N - s.Errors)
	f.add(k, "ttfb50", float64(s.TTFB50)/1e6)
	f.add(k, "ttfb99", float64(s.TTFB99)/1e6)
	f.add(k, "turn50", float64(s.Turn50)/1e6)
	f.add(k, "turn99", float64(s.Turn99)/1e6)
	f.add(k, "rate", s.PerSecond)
	f.add(k, "errors", float64(s.Errors))
	if r.direct || ok == 0 {
		return
	}
	if r.haveDB {
		f.add(k, "persisted", float64(r.persisted)/s.Elapsed.Seconds())
		f.add(k, "commits", float64(r.commits)/ok)
	}
	f.add(k, "parleyCPU", perTurn(r.parleyCPU, ok))
	f.add(k, "pgCPU", perTurn(r.pgCPU, ok))
	if r.haveStatements {
		f.add(k, "statements", float64(r.statements)/ok)
	}
}

// printTable prints the figures over the rounds as a Markdown table, each
// cell the lowest and highest value of the rounds.
func printTable(out io.Writer, c config, f figures) {
	fmt.Fprintf(out, "\n%d rounds of %d requests per row (min–max over the rounds; ms)\n\n", c.rounds, c.n)
	fmt.Fprintln(out, "| mode | run | TTFB p50 | TTFB p99 | turn p50 | turn p99 | turns/s | errors | persisted/s | CPU ms/turn parley | CPU ms/turn Postgres | statements/turn | commits/turn |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, m := range c.modes {
		for _, conc := range c.concs {
			names := []string{"direct"}
			for _, t := range c.targets {
				names = append(names, t.name)
			}
			for _, target := range names {
				v := f[key{m, conc, target}]
				if v == nil {
					continue
				}
				run := fmt.Sprintf("model direct, c%d", conc)
				if target != "direct" {
					run = fmt.Sprintf("through %s, c%d", target, conc)
				}
				dec := func(name string) string { return v[name].Format(spanFormat(v[name])) }
				fmt.Fprintf(out, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", m, run,
					dec("ttfb50"), dec("ttfb99"), dec("turn50"), dec("turn99"), v["rate"].Format("%.0f"), v["errors"].Format("%.0f"),
					v["persisted"].Format("%.0f"), v["parleyCPU"].Format("%.2f"), v["pgCPU"].Format("%.2f"),
					v["statements"].Format("%.1f"), v["commits"].Format("%.1f"))
			}
		}
	}
}

// comparedFigures are the figures printComparison sets side by side: their
// names in figures, what the table calls them, and whether they are the
// server's quantile minus the model direct's of the same round.
var comparedFigures = []struct {
	name, label string
	added       bool
}{
	{"rate", "turns/s", false},
	{"persisted", "persisted/s", false},
	{"ttfb50", "TTFB p50", false},
	{"ttfb99", "TTFB p99", false},
	{"ttfb50", "added TTFB p50", true},
	{"ttfb99", "added TTFB p99", true},
	{"turn50", "turn p50", false},
	{"parleyCPU", "CPU ms/turn parley", false},
	{"pgCPU", "CPU ms/turn Postgres", false},
	{"statements", "statements/turn", false},
}

// printComparison prints, for each server after the first, each figure as
// a ratio to the first server's in the same round: the median over the
// rounds, then each round's.
func printComparison(out io.Writer, c config, f figures) {
	base := c.targets[0].name
	for _, t := range c.targets[1:] {
		fmt.Fprintf(out, "\n%s against %s, round by round (the ratio %s / %s of each round; min–max over the rounds for each)\n\n", t.name, base, t.name, base)
		fmt.Fprintf(out, "| mode | conc | figure | %s | %s | median ratio | each round |\n|---|---|---|---|---|---|---|\n", base, t.name)
		for _, m := range c.modes {
			for _, conc := range c.concs {
				for _, fig := range comparedFigures {
					a, b := f[key{m, conc, base}][fig.name], f[key{m, conc, t.name}][fig.name]
					if fig.added {
						direct := f[key{m, conc, "direct"}][fig.name]
						a, b = minus(a, direct), minus(b, direct)
					}
					ratios := Ratios(b, a)
					if ratios == nil {
						continue
					}
					each := make([]string, len(ratios))
					for i, r := range ratios {
						each[i] = fmt.Sprintf("%.2f", r)
					}
					fmt.Fprintf(out, "| %s | %d | %s | %s | %s | ×%.2f | %s |\n", m, conc, fig.label,
						a.Format(spanFormat(a)), b.Format(spanFormat(b)), Median(ratios), strings.Join(each, ", "))
				}
			}
		}
	}
}

// minus is s less d, round by round; nil unless both have every round.
func minus(s, d Span) Span {
	if len(s) == 0 || len(s) != len(d) {
		return nil
	}
	out := make(Span, len(s))
	for i := range s {
		out[i] = s[i] - d[i]
	}
	return out
}

// spanFormat is the format of s's values: whole numbers from 10 up, else
// two decimals.
func spanFormat(s Span) string {
	if len(s) > 0 && slices.Min(s) >= 10 {
		return "%.0f"
	}
	return "%.2f"
}
