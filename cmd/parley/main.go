// Command parley runs the Parley service and its administrative tasks.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"syscall"

	_ "time/tzdata" // IANA zones for tenant time zones, whatever the host has

	"golang.org/x/crypto/bcrypt"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/migrations"
	"github.com/parley/parley/web"
)

const usage = `usage: parley <command> [flags]

commands:
  serve [--cpuprofile F]         run the HTTP server and background jobs; --cpuprofile writes
                                 a CPU profile (runtime/pprof) to F until the server stops
  migrate                        apply database migrations
  tenant create --slug S --name N --plan P [--owner-email E] [--owner-password W]
  tenant plan --slug S [--plan P] [--seats N]
                                 set a tenant's plan, its bot seats or both (at once, in its audit
                                 log, as the operator API's PUT /operator/tenants/{slug}/plan)
  tenant usage [--slug S]        print one tenant's plan and usage this month, or every tenant's
  token create --tenant S --scopes a,b [--name N] [--legacy]
  user create --email E --password W --tenant S
                                 add an owner; for an existing user, set a new password
                                 (ending their sessions) and add the tenant if not theirs
  signup invite --email E        an invitation to create a workspace (PARLEY_SIGNUP=invite): prints
                                 its link (one use, 7 days), mailed too when PARLEY_SMTP_URL is set
  oauth rotate-key               add a new OAuth signing key; the previous one still verifies
                                 (and stays in the JWKS) until the next rotation
  secret rotate                  re-seal every secret with PARLEY_SECRET_KEY (the new key) that
                                 PARLEY_SECRET_KEY_PREVIOUS (the old one) sealed, online
  backup --out FILE              dump Parley's schema and data (pg_dump's custom format), after
                                 checking that PARLEY_SECRET_KEY opens its secrets
  restore --in FILE              restore a backup into DATABASE_URL, an empty database, if
                                 PARLEY_SECRET_KEY opens the backup's secrets
  probe [--url U]                exit 0 when the local server's /readyz answers 200 (a container's
                                 health check)
  dev-db --dir D --port P [--db NAME]   start (or reuse) a private PostgreSQL cluster; prints its URL
  dev-db --dir D --stop          stop that cluster if it runs
  seed-demo                      on an empty database, create the demo tenant and print its logins
  seed-conversations --tenant S [--conversations N] [--messages-per M] [--days D] [--seed X]
                                 add N generated conversations (about N*M messages, with tool runs,
                                 submissions and votes) to a tenant, spread over the last D days
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, auth.NewPasswords(bcrypt.DefaultCost)); err != nil {
		fmt.Fprintln(os.Stderr, "parley:", err)
		os.Exit(1)
	}
}

// errUsage is returned for a wrong command line; the usage text has been printed.
var errUsage = errors.New("see usage above")

// run runs one command line; pws hashes the passwords of the owners it
// creates (serve hashes at the cost of its configuration).
func run(ctx context.Context, args []string, stdout, stderr io.Writer, pws *auth.Passwords) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	cmd, rest := args[0], args[1:]
	if (cmd == "tenant" || cmd == "token" || cmd == "user") && len(rest) > 0 && rest[0] == "create" {
		cmd, rest = cmd+" create", rest[1:]
	}
	if cmd == "signup" && len(rest) > 0 && rest[0] == "invite" {
		cmd, rest = "signup invite", rest[1:]
	}
	if cmd == "tenant" && len(rest) > 0 && (rest[0] == "plan" || rest[0] == "usage") {
		cmd, rest = cmd+" "+rest[0], rest[1:]
	}
	if cmd == "oauth" && len(rest) > 0 && rest[0] == "rotate-key" {
		cmd, rest = "oauth rotate-key", rest[1:]
	}
	if cmd == "secret" && len(rest) > 0 && rest[0] == "rotate" {
		cmd, rest = "secret rotate", rest[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, rest, stdout, stderr)
	case "migrate":
		return withDB(ctx, func(store *db.DB) error {
			if err := migrations.Up(ctx, store.Pool()); err != nil {
				return err
			}
			fmt.Fprintln(stdout, "migrations applied")
			return nil
		})
	case "tenant create":
		return tenantCreate(ctx, rest, stdout, stderr, pws)
	case "tenant plan":
		return tenantPlan(ctx, rest, stdout, stderr)
	case "tenant usage":
		return tenantUsage(ctx, rest, stdout, stderr)
	case "token create":
		return tokenCreate(ctx, rest, stdout, stderr)
	case "user create":
		return userCreate(ctx, rest, stdout, stderr, pws)
	case "signup invite":
		return signupInvite(ctx, rest, stdout, stderr)
	case "oauth rotate-key":
		return rotateOAuthKey(ctx, stdout)
	case "secret rotate":
		return secretRotate(ctx, rest, stdout, stderr)
	case "backup":
		return backup(ctx, rest, stdout, stderr)
	case "restore":
		return restore(ctx, rest, stdout, stderr)
	case "probe":
		return probe(ctx, rest, stdout, stderr)
	case "dev-db":
		return devDB(ctx, rest, stdout, stderr)
	case "seed-demo":
		return seedDemo(ctx, stdout, pws)
	case "seed-conversations":
		return seedConversations(ctx, rest, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", strings.Join(args[:min(2, len(args))], " "))
}

func loadConfig() (web.Config, error) { return web.LoadConfig(os.Getenv, os.Environ()) }

// withDB opens the database named by DATABASE_URL for a one-off command.
func withDB(ctx context.Context, fn func(*db.DB) error) error {
	url, err := env("DATABASE_URL")
	if err != nil {
		return err
	}
	if url == "" {
		return errors.New("DATABASE_URL: required")
	}
	store, err := db.Open(ctx, url, 4)
	if err != nil {
		return err
	}
	defer store.Close()
	return fn(store)
}

// rotateOAuthKey adds a new signing key of OAuth access tokens and retires
// all but the previous one.
func rotateOAuthKey(ctx context.Context, stdout io.Writer) error {
	b, err := box()
	if err != nil {
		return err
	}
	return withDB(ctx, func(store *db.DB) error {
		kid, err := (&auth.SigningKeys{DB: store, Box: b}).Rotate(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "new OAuth signing key %s; the previous key still verifies until the next rotation\n", kid)
		return nil
	})
}

// box builds the secret box from PARLEY_SECRET_KEY (and
// PARLEY_SECRET_KEY_PREVIOUS during a rotation), or their files.
func box() (*auth.Box, error) {
	s, err := env("PARLEY_SECRET_KEY")
	if err != nil {
		return nil, err
	}
	if s == "" {
		return nil, errors.New("PARLEY_SECRET_KEY: required (64 hexadecimal characters)")
	}
	key, err := auth.ParseKey(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("PARLEY_SECRET_KEY: %w", err)
	}
	var previous []byte
	if p, err := env("PARLEY_SECRET_KEY_PREVIOUS"); err != nil {
		return nil, err
	} else if p != "" {
		if previous, err = auth.ParseKey(strings.TrimSpace(p)); err != nil {
			return nil, fmt.Errorf("PARLEY_SECRET_KEY_PREVIOUS: %w", err)
		}
	}
	b, err := auth.NewRotatingBox(key, previous)
	if err != nil {
		return nil, fmt.Errorf("PARLEY_SECRET_KEY_PREVIOUS: %w", err)
	}
	return b, nil
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to this file until the server stops")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	serveGC(os.Getenv)
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var handler slog.Handler = slog.NewJSONHandler(stderr, nil)
	if cfg.LogFormat == "text" {
		handler = slog.NewTextHandler(stderr, nil)
	}
	stopTraces, err := web.OpenTraces(ctx, &cfg)
	if err != nil {
		return err
	}
	// After the server has stopped (deferred first, run last): the last spans are flushed.
	defer func() { _ = stopTraces(context.Background()) }()
	logger := slog.New(cfg.LogHandler(handler))
	if cfg.Traces != nil {
		logger.Info("traces on", "export", cfg.TracesDescription())
	}
	store, err := db.Open(ctx, cfg.DatabaseURL, cfg.DBMaxConns, cfg.DBOptions()...)
	if err != nil {
		return err
	}
	defer store.Close()
	if err := schemaReady(ctx, store); err != nil {
		return err
	}
	if err := checkSecretKey(ctx, store, cfg); err != nil {
		return err
	}
	srv, err := web.NewServer(cfg, store, logger)
	if err != nil {
		return err
	}
	srv.Listening = func(addr net.Addr) { fmt.Fprint(stdout, banner(cfg, addr)) }
	defer hurryOnSecondSignal(ctx, srv)()
	return srv.Run(ctx)
}

// schemaReady refuses a database whose schema is older than this binary's
// migrations: the new code would fail on the old tables. A newer schema is
// served (an instance of the previous version during an upgrade: every
// migration keeps the previous version working, README "Upgrades").
func schemaReady(ctx context.Context, store *db.DB) error {
	current, target, err := migrations.Versions(ctx, store.Pool())
	if err != nil {
		return err
	}
	if current < target {
		return fmt.Errorf("the database's schema is at version %d and this parley needs %d: run `parley migrate` first (safe while instances of the previous version serve)", current, target)
	}
	return nil
}

// hurryOnSecondSignal: once ctx ends (the first SIGTERM or Ctrl-C begins
// the drain), a second one ends the drain's wait, for an operator who wants
// the port closed now. The func it returns stops listening.
func hurryOnSecondSignal(ctx context.Context, srv *web.Server) func() {
	sig := make(chan os.Signal, 1)
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
			return
		}
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		select {
		case <-sig:
			srv.Hurry()
		case <-done:
		}
	}()
	return func() {
		close(done)
		signal.Stop(sig)
	}
}

// banner is what parley serve prints once it listens: the address it
// listens on (the port chosen when PARLEY_ADDR's was 0) and the address
// to open, PARLEY_BASE_URL (by default http://localhost and PARLEY_ADDR's
// port).
func banner(cfg web.Config, addr net.Addr) string {
	return fmt.Sprintf("Parley listening on %s: open %s (admin: %s/admin)\n", addr, cfg.BaseURL, cfg.BaseURL)
}

// serveGCPercent is the garbage collector's target of `parley serve`
// unless GOGC is set. A chat turn allocates about 100 KB against a live
// heap of a few MB, so at Go's default of 100 the collector ran every 35
// turns or so, a tenth of the server's CPU and the slowest first bytes
// (BENCHMARKS.md, issue 18); at 400 the heap grows to five times what is
// live before a collection (a few tens of MB), a quarter as many.
const serveGCPercent = 400

// serveGC sets the collector's target of the server, unless the operator
// chose one with GOGC (which the runtime read already).
func serveGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(serveGCPercent)
	}
}

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
