package clustertest_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestInstancesAndFailover is issue 39's proof in a reduced form: two
// instances behind HAProxy on a primary with a synchronous standby, chat
// turns through HAProxy all along, one instance killed with SIGKILL (and
// started again, as a supervisor would), then the primary crashed
// (pg_ctl stop -m immediate) and the standby promoted. It checks that
// every turn whose stream reached its done event has its reply in the
// promoted database, that no answer was a 500 (a database out of reach is
// a 503 with Retry-After), that only requests in flight on the killed
// instance lost their answer, and that both instances serve again on
// their own after the promotion; it reports the time without service.
func TestInstancesAndFailover(t *testing.T) {
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		t.Fatal("HAProxy is missing: this test runs two instances behind it. Install Debian's package: apt-get install haproxy (.ci/run does)")
	}
	began := time.Now()
	c := newCluster(t)
	model := httptest.NewServer(http.HandlerFunc(fakeModel))
	t.Cleanup(model.Close)
	c.modelURL = model.URL + "/v1"
	built := make(chan error, 1)
	go func() { built <- c.buildParley() }()
	c.startDatabases()
	if err := <-built; err != nil {
		t.Fatal(err)
	}
	t.Logf("binary built and databases started in %s", time.Since(began).Round(time.Millisecond))
	c.prepare()
	t.Logf("migrated in %s", time.Since(began).Round(time.Millisecond))

	ports := freePorts(t, 3)
	a, b := c.startInstance("a", ports[0]), c.startInstance("b", ports[1])
	lbPort := ports[2]
	lb := fmt.Sprintf("http://127.0.0.1:%d", lbPort)
	c.startHAProxy(haproxy, lbPort, a, b)
	for _, u := range []string{a.url, b.url, lb} {
		c.waitReady(u)
	}

	t.Logf("instances and HAProxy ready in %s", time.Since(began).Round(time.Millisecond))
	l := &load{url: lb + "/chat/load", client: &http.Client{Timeout: 20 * time.Second}}
	l.start(4)
	stopped := false
	stopLoad := func() {
		if !stopped {
			stopped = true
			l.stop()
		}
	}
	defer stopLoad()
	c.waitAcked(l, 30, "before the kill")

	// An instance dies: the balancer sends to the other one.
	killAt := time.Now()
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = a.cmd.Wait()
	killedAt := time.Now()
	c.waitAcked(l, l.acked.Load()+30, "after the kill")
	a = c.startInstance("a", a.port) // its supervisor starts it again
	c.waitReady(a.url)

	t.Logf("instance a killed and started again in %s", time.Since(began).Round(time.Millisecond))
	// The primary crashes; the standby is promoted.
	crashAt := time.Now()
	if out, err := c.pg("pg_ctl", "stop", "-D", c.primary, "-m", "immediate", "-w").CombinedOutput(); err != nil {
		t.Fatalf("stopping the primary: %v\n%s", err, out)
	}
	if out, err := c.pg("pg_ctl", "promote", "-D", c.standby, "-w", "-t", "30").CombinedOutput(); err != nil {
		t.Fatalf("promoting the standby: %v\n%s", err, out)
	}
	promotedAt := time.Now()
	c.waitAcked(l, l.acked.Load()+30, "after the promotion")
	stopLoad()
	outs := l.outcomes()
	t.Logf("load stopped in %s", time.Since(began).Round(time.Millisecond))

	// Each instance serves again on its own: b kept running through the
	// promotion, a started on the old primary after the kill.
	// A request may meet a connection of the pool that went down with
	// the old primary, and be refused with a 503 (never a 500); the next
	// ones are answered.
	for i, in := range []*instance{a, b} {
		var seen []string
		for deadline := time.Now().Add(10 * time.Second); ; {
			o := chat(context.Background(), &http.Client{Timeout: 20 * time.Second}, in.url+"/chat/load", fmt.Sprintf("direct-%s-%d", in.name, len(seen)), fmt.Sprintf("10.250.%d.%d", i, len(seen)))
			if o.done {
				break
			}
			seen = append(seen, fmt.Sprintf("%d %s %s", o.status, o.streamErr, o.body))
			if o.status == http.StatusInternalServerError || time.Now().After(deadline) {
				t.Errorf("instance %s after the promotion: %q", in.name, seen)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	// What the clients saw.
	var acked []outcome
	var firstAfterCrash time.Time
	counts := map[string]int{}
	// In flight on the instance that died, or sent on a connection HAProxy
	// still kept to it as it died (HAProxy then closes the client's
	// connection without an answer, so that a client may send again).
	inFlightAtKill := func(o outcome) bool { return o.start.Before(killedAt.Add(time.Second)) && o.end.After(killAt) }
	for _, o := range outs {
		switch {
		case o.done:
			acked = append(acked, o)
			counts["done"]++
			if o.start.After(crashAt) && (firstAfterCrash.IsZero() || o.end.Before(firstAfterCrash)) {
				firstAfterCrash = o.end
			}
		case o.status == http.StatusInternalServerError:
			counts["500"]++
			t.Errorf("a 500 at %s (%s after the crash): %s", o.end.Format("15:04:05.000"), o.end.Sub(crashAt).Round(time.Millisecond), o.body)
		case o.status == http.StatusServiceUnavailable:
			counts["503"]++
			if o.retryAfter == "" || o.end.Before(crashAt) {
				t.Errorf("a 503 at %s (%s after the crash), Retry-After %q: %s", o.end.Format("15:04:05.000"), o.end.Sub(crashAt).Round(time.Millisecond), o.retryAfter, o.body)
			}
		case o.status == http.StatusOK && o.streamErr != "":
			// A turn under way when the primary went: its reply could not be
			// stored, and the stream says so as a 503 would.
			counts["stream error "+o.streamErr]++
			if o.streamErr != "TEMPORARILY_UNAVAILABLE" || o.end.Before(crashAt) {
				t.Errorf("a stream ended with the error %s %q at %s (%s after the crash)", o.streamErr, o.body, o.end.Format("15:04:05.000"), o.end.Sub(crashAt).Round(time.Millisecond))
			}
		case inFlightAtKill(o) && (o.status == 0 || o.status == http.StatusOK || o.status == http.StatusBadGateway):
			// The balancer answers 502 when no byte of the answer had left
			// the instance, else the stream is cut.
			counts[fmt.Sprintf("lost with the killed instance (status %d)", o.status)]++
		default:
			counts[fmt.Sprintf("other (status %d)", o.status)]++
			t.Errorf("request at %s: status %d, %v, stream error %q: %s", o.start.Format("15:04:05.000"), o.status, o.err, o.streamErr, o.body)
		}
	}
	outage := firstAfterCrash.Sub(crashAt)
	// HAProxy's own account of the instances going down and up, to read
	// any 503 of its own against.
	if b, err := os.ReadFile(filepath.Join(c.dir, "haproxy.log")); err == nil {
		t.Logf("HAProxy (kill at %s, crash at %s, promoted at %s):\n%s", killAt.UTC().Format("15:04:05.000"), crashAt.UTC().Format("15:04:05.000"), promotedAt.UTC().Format("15:04:05.000"), b)
	}
	t.Logf("%d requests through HAProxy: %v; promotion took %s; time without service from the crash to the first answered turn: %s",
		len(outs), counts, promotedAt.Sub(crashAt).Round(time.Millisecond), outage.Round(time.Millisecond))
	if firstAfterCrash.IsZero() {
		t.Fatal("no turn was answered after the primary crashed")
	}

	// Every acknowledged turn is in the promoted database, word for word.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.dsn(c.standbyPort))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	sessions := make([]string, len(acked))
	for i, o := range acked {
		sessions[i] = o.session
	}
	rows, _ := conn.Query(ctx, `SELECT c.session_id, m.content FROM conversations c
		JOIN tenants t ON t.id = c.tenant_id AND t.slug = 'load'
		JOIN messages m ON m.tenant_id = c.tenant_id AND m.conversation_id = c.id AND m.role = 'assistant'
		WHERE c.session_id = ANY($1)`, sessions)
	stored := map[string]string{}
	var session, content string
	if _, err := pgx.ForEachRow(rows, []any{&session, &content}, func() error { stored[session] = content; return nil }); err != nil {
		t.Fatal(err)
	}
	lost := 0
	for _, o := range acked {
		if got, ok := stored[o.session]; !ok || got != o.message {
			lost++
			if lost <= 5 {
				t.Errorf("acknowledged turn of session %s (done at %s) not stored as answered: stored %q, answered %q", o.session, o.end.Format("15:04:05.000"), got, o.message)
			}
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged turns are not in the promoted database", lost, len(acked))
	}
	if t.Failed() {
		c.dumpLogs()
	}
}

// cluster is the test's PostgreSQL pair, parley binary and processes.
type cluster struct {
	t                        *testing.T
	dir, pgbin, root, parley string
	asRoot                   bool
	primary, standby         string // data directories
	primaryPort, standbyPort int
	secret, modelURL         string
	logs                     []string
}

func newCluster(t *testing.T) *cluster {
	c := &cluster{t: t, asRoot: os.Geteuid() == 0}
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("go env GOMOD: %v", err)
	}
	c.root = filepath.Dir(strings.TrimSpace(string(out)))
	if c.pgbin, err = findPGBin(); err != nil {
		t.Fatal(err)
	}
	// Not t.TempDir: PostgreSQL runs as the postgres user when the test
	// runs as root, and must reach its data directories.
	if c.dir, err = os.MkdirTemp("", "parley-clustertest-"); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(c.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(c.dir) })
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	c.secret = hex.EncodeToString(key)
	return c
}

// buildParley builds the parley binary as the Dockerfile and make test's
// packaging check (scripts/check-deploy.sh) build it: the same flags, so
// that the link is in the build cache once either has run.
func (c *cluster) buildParley() error {
	c.parley = filepath.Join(c.dir, "parley")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", c.parley, "./cmd/parley")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Dir = c.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building parley: %v\n%s", err, out)
	}
	return nil
}

// pg runs one of PostgreSQL's programs, as the postgres user when root.
func (c *cluster) pg(name string, args ...string) *exec.Cmd {
	bin := filepath.Join(c.pgbin, name)
	if c.asRoot {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", bin}, args...)...)
	}
	return exec.Command(bin, args...)
}

func (c *cluster) dsn(port int) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/parley?sslmode=disable", port)
}

// startDatabases starts the primary and, from its base backup, a standby
// it commits synchronously to. Durability aside (fsync off, a test's
// cluster), it is the set-up of make cluster.
func (c *cluster) startDatabases() {
	t := c.t
	ports := pgPorts(t)
	c.primaryPort, c.standbyPort = ports[0], ports[1]
	c.primary, c.standby = filepath.Join(c.dir, "primary"), filepath.Join(c.dir, "standby")
	for _, d := range []string{c.primary, c.standby} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if c.asRoot {
			if out, err := exec.Command("chown", "postgres:", d).CombinedOutput(); err != nil {
				t.Fatalf("chown: %v %s", err, out)
			}
		}
	}
	run := func(cmd *exec.Cmd) {
		t.Helper()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
		}
	}
	run(c.pg("initdb", "-D", c.primary, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync"))
	opts := "-c listen_addresses=127.0.0.1 -c unix_socket_directories= -c max_connections=60 -c fsync=off -c full_page_writes=off -c wal_level=replica -c max_wal_senders=4 -c shared_buffers=16MB"
	start := func(data string, port int) {
		t.Helper()
		run(c.pg("pg_ctl", "start", "-D", data, "-l", filepath.Join(data, "server.log"), "-w", "-t", "60", "-o", fmt.Sprintf("-p %d %s", port, opts)))
		c.logs = append(c.logs, filepath.Join(data, "server.log"))
	}
	start(c.primary, c.primaryPort)
	t.Cleanup(func() {
		for _, d := range []string{c.primary, c.standby} {
			_ = c.pg("pg_ctl", "stop", "-D", d, "-m", "immediate", "-w").Run()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.primaryPort))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, `CREATE DATABASE parley`); err != nil {
		t.Fatal(err)
	}
	run(c.pg("pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(c.primaryPort), "-U", "postgres", "-D", c.standby, "-R", "-X", "stream", "-c", "fast", "--no-sync"))
	start(c.standby, c.standbyPort)
	// From here a commit waits for the standby's flush.
	if _, err := admin.Exec(ctx, `ALTER SYSTEM SET synchronous_standby_names = '*'`); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `SELECT pg_reload_conf()`); err != nil {
		t.Fatal(err)
	}
	for {
		var n int
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal("the standby did not become synchronous")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// prepare migrates and creates the tenant the load chats with, through
// the DSN naming both hosts.
func (c *cluster) prepare() {
	for _, args := range [][]string{
		{"migrate"},
		{"tenant", "create", "--slug", "load", "--name", "Load Co", "--plan", "scale"},
		{"tenant", "plan", "--slug", "load", "--seats", "1000"},
	} {
		cmd := exec.Command(c.parley, args...)
		cmd.Env = c.env("127.0.0.1:0")
		if out, err := cmd.CombinedOutput(); err != nil {
			c.t.Fatalf("parley %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// env is the environment of a parley process: nothing of the test's but
// PATH and HOME, and the DSN with both hosts.
func (c *cluster) env(addr string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		fmt.Sprintf("DATABASE_URL=postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/parley?sslmode=disable&target_session_attrs=read-write&connect_timeout=2", c.primaryPort, c.standbyPort),
		"PARLEY_SECRET_KEY=" + c.secret, "PARLEY_ADDR=" + addr, "PARLEY_TRUSTED_PROXIES=127.0.0.1/32",
		"PARLEY_DB_MAX_CONNS=8", "PARLEY_LLM_PROVIDER=openai", "PARLEY_LLM_BASE_URL=" + c.modelURL,
		"PARLEY_LLM_MODEL=fake", "PARLEY_LLM_API_KEY=fake",
	}
}

// instance is one running `parley serve`.
type instance struct {
	name, url string
	port      int
	cmd       *exec.Cmd
}

func (c *cluster) startInstance(name string, port int) *instance {
	t := c.t
	in := &instance{name: name, port: port, url: fmt.Sprintf("http://127.0.0.1:%d", port)}
	logPath := filepath.Join(c.dir, fmt.Sprintf("parley-%s-%d.log", name, len(c.logs)))
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	c.logs = append(c.logs, logPath)
	in.cmd = exec.Command(c.parley, "serve")
	in.cmd.Env = c.env(fmt.Sprintf("127.0.0.1:%d", port))
	in.cmd.Stdout, in.cmd.Stderr = io.Discard, log
	if err := in.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if in.cmd.ProcessState == nil {
			_ = in.cmd.Process.Kill()
			_ = in.cmd.Wait()
		}
		_ = log.Close()
	})
	return in
}

// startHAProxy renders deploy/haproxy's template for the instances and
// starts HAProxy on port.
func (c *cluster) startHAProxy(bin string, port int, ins ...*instance) {
	t := c.t
	tmpl, err := os.ReadFile(filepath.Join(c.root, "deploy", "haproxy", "haproxy.cfg.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	var servers []string
	for _, in := range ins {
		servers = append(servers, fmt.Sprintf("    server %s 127.0.0.1:%d check", in.name, in.port))
	}
	cfg := strings.NewReplacer("{{BIND}}", fmt.Sprintf("127.0.0.1:%d", port), "{{SERVERS}}", strings.Join(servers, "\n"), "{{EXTRA}}", "").Replace(string(tmpl))
	// The instances' state changes with the time of each, to be read
	// against the test's own times (notice: not one line a request).
	cfg = strings.Replace(cfg, "global\n", "global\n    log stderr format iso local0 notice\n", 1)
	cfg = strings.Replace(cfg, "defaults\n", "defaults\n    log global\n", 1)
	path := filepath.Join(c.dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(c.dir, "haproxy.log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	c.logs = append(c.logs, logPath)
	cmd := exec.Command(bin, "-f", path)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = log.Close()
	})
}

// waitReady waits for url's /readyz to answer 200.
func (c *cluster) waitReady(url string) {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			c.dumpLogs()
			c.t.Fatalf("%s/readyz did not answer 200 within 30 s: %v", url, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitAcked waits until the load has n acknowledged turns.
func (c *cluster) waitAcked(l *load, n int64, when string) {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for l.acked.Load() < n {
		if time.Now().After(deadline) {
			l.stop()
			counts := map[string]int{}
			for _, o := range l.outcomes() {
				counts[fmt.Sprintf("status %d done %t %s", o.status, o.done, o.streamErr)]++
			}
			c.dumpLogs()
			c.t.Fatalf("%s: %d turns answered of the %d awaited within 30 s; outcomes %v", when, l.acked.Load(), n, counts)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// dumpLogs writes the end of every log of the cluster to the test's output.
func (c *cluster) dumpLogs() {
	for _, p := range c.logs {
		b, _ := os.ReadFile(p)
		if len(b) > 3000 {
			b = b[len(b)-3000:]
		}
		c.t.Logf("--- %s (end):\n%s", filepath.Base(filepath.Dir(p))+"/"+filepath.Base(p), b)
	}
}

// load is a few visitors chatting through the balancer without pause,
// each turn a new session from an address of its own.
type load struct {
	url    string
	client *http.Client
	acked  atomic.Int64
	seq    atomic.Int64
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	outs   []outcome
}

func (l *load) start(workers int) {
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	for range workers {
		l.wg.Go(func() {
			for ctx.Err() == nil {
				n := l.seq.Add(1)
				o := chat(ctx, l.client, l.url, fmt.Sprintf("cluster-%d", n), fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255))
				if ctx.Err() != nil && !o.done {
					return // stopped by the test, not by the cluster
				}
				l.mu.Lock()
				l.outs = append(l.outs, o)
				l.mu.Unlock()
				if o.done {
					l.acked.Add(1)
				}
			}
		})
	}
}

func (l *load) stop() {
	l.cancel()
	l.wg.Wait()
}

func (l *load) outcomes() []outcome {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]outcome(nil), l.outs...)
	sort.Slice(out, func(i, j int) bool { return out[i].start.Before(out[j].start) })
	return out
}

// outcome is what a client saw of one chat turn.
type outcome struct {
	session, addr   string
	start, end      time.Time
	status          int    // 0: no HTTP response
	retryAfter      string // of a 503
	done            bool   // the stream reached its done event
	message         string // the done event's message: the answer
	streamErr, body string // an error event's code; the start of a refusal's body
	err             error
}

// chat sends one visitor's first message and reads the answer's stream.
func chat(ctx context.Context, client *http.Client, url, session, addr string) outcome {
	o := outcome{session: session, addr: addr, start: time.Now()}
	defer func() { o.end = time.Now() }()
	body := fmt.Sprintf(`{"message":"Hello, what do you sell?","sessionId":%q}`, session)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		o.err = err
		return o
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", addr)
	resp, err := client.Do(req)
	if err != nil {
		o.err = err
		o.end = time.Now()
		return o
	}
	defer resp.Body.Close()
	o.status = resp.StatusCode
	if resp.StatusCode != http.StatusOK {
		o.retryAfter = resp.Header.Get("Retry-After")
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		o.body = string(bytes.TrimSpace(raw))
		o.end = time.Now()
		return o
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Done    bool   `json:"done"`
			Message string `json:"message"`
			Error   string `json:"error"`
			Code    string `json:"code"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			o.err = fmt.Errorf("event %q: %w", data, err)
			break
		}
		switch {
		case ev.Error != "":
			o.streamErr, o.body = cmpOr(ev.Code, "none"), ev.Error
		case ev.Done:
			o.done, o.message = true, ev.Message
		}
	}
	if o.err == nil {
		o.err = sc.Err()
	}
	if !o.done && o.err == nil && o.streamErr == "" {
		o.err = errors.New("the stream ended without its done event")
	}
	o.end = time.Now()
	return o
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// fakeModel is an OpenAI-compatible model that streams five chunks 10 ms
// apart: turns last long enough to be in flight when an instance dies.
func fakeModel(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Stream bool `json:"stream"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	const word = "sold "
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c","object":"chat.completion","created":1,"model":"fake","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`, strings.Repeat(word, 5))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	send := func(delta, finish string) {
		fmt.Fprintf(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"fake","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`+"\n\n", delta, finish)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send(`{"role":"assistant","content":""}`, "null")
	for range 5 {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
		send(fmt.Sprintf(`{"content":%q}`, word), "null")
	}
	send(`{}`, `"stop"`)
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// freePorts are n distinct loopback ports nobody listens on.
func freePorts(t *testing.T, n int) []int {
	// Every listener is held until all are chosen, so that no two ports
	// are the same (a port closed may be the next one handed out).
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// pgPorts are two free ports of 5450-5459 for the primary and the standby
// (apart from make run's 5438 and make test's 5439).
func pgPorts(t *testing.T) []int {
	var ports []int
	for p := 5450; p <= 5459 && len(ports) < 2; p++ {
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err == nil {
			_ = l.Close()
			ports = append(ports, p)
		}
	}
	if len(ports) < 2 {
		t.Fatal("ports 5450 to 5459 on 127.0.0.1 are taken: this test's primary and standby need two of them")
	}
	return ports
}

// findPGBin finds PostgreSQL's server programs as `parley dev-db` does.
func findPGBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Dir(real), nil
		}
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dir := strings.TrimSpace(string(out))
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, nil
		}
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(matches) > 0 {
		sort.Strings(matches)
		return filepath.Dir(matches[len(matches)-1]), nil
	}
	return "", errors.New("PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup) not found: apt-get install postgresql")
}
