// Package web assembles Parley's HTTP server: configuration, the Echo
// instance, the route table, middleware and error mapping.
package web

import (
	"crypto/tls"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"
	"golang.org/x/crypto/bcrypt"

	"github.com/parley/parley/agent/outbound/stripe"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/mail"
	"github.com/parley/parley/web/tracing"
)

// Config is everything Parley reads from the environment.
type Config struct {
	DatabaseURL      string
	Addr             string
	BaseURL          string
	SecretKey        []byte
	CDNURL           string
	LLMProvider      string
	LLMBaseURL       string
	LLMAPIKey        string
	LLMModel         string
	SSRFAllow        []netip.Prefix
	TrustedProxies   []netip.Prefix
	CaptchaVerifyURL string
	// CaptchaScriptURL is the bot challenge's browser script, which the
	// widget loads when a tenant turned the gate on.
	CaptchaScriptURL string
	// AdminCaptchaSiteKey and AdminCaptchaSecretKey are the operator's keys
	// of the bot challenge the dashboard's sign-in asks of an address after
	// repeated failures; both empty: no challenge.
	AdminCaptchaSiteKey   string
	AdminCaptchaSecretKey string
	DBMaxConns            int32
	LogFormat             string
	// StripeAPIURL is the base URL of Stripe's API that payment connectors
	// call (PARLEY_STRIPE_API_URL, default https://api.stripe.com): a
	// proxy, or a fake in tests.
	StripeAPIURL string
	// SMTP is the mail server of PARLEY_SMTP_URL, nil when unset: the
	// dashboard then sends no password-reset links and says how an
	// operator resets a password instead.
	SMTP *mail.Config
	// Signup is PARLEY_SIGNUP: closed (the default: tenants come from the
	// command line), invite (the operator's invitations) or open (anyone,
	// once their email is confirmed, which needs PARLEY_SMTP_URL).
	Signup string
	// BodyTimeout bounds how long a request's body may take to arrive,
	// counted from the end of its headers (PARLEY_BODY_TIMEOUT, default 60 s).
	BodyTimeout time.Duration
	// MaxConnsPerAddress caps the connections open at once from one client
	// address, trusted proxies excepted (PARLEY_MAX_CONNS_PER_ADDRESS,
	// default 256; 0 turns the cap off).
	MaxConnsPerAddress int
	// PasswordCost is the bcrypt cost of admin passwords: bcrypt.DefaultCost.
	// It is not read from the environment; tests lower it to bcrypt.MinCost.
	PasswordCost int
	// VapiAPIKey and VapiBaseURL are the operator's account at the voice
	// orchestrator (PARLEY_VAPI_API_KEY, PARLEY_VAPI_BASE_URL, default
	// https://api.vapi.ai), with which the managed voice setup creates
	// assistants and buys numbers; no key: managed setup answers 503 and
	// tenants link their own assistant.
	VapiAPIKey  string
	VapiBaseURL string
	// EmbeddingsURL is the operator's OpenAI-compatible embedding API, up
	// to and including its version (PARLEY_EMBEDDINGS_URL; requests go to
	// its /embeddings): the corpus is embedded and the turn's knowledge
	// ranked by meaning too. "" (the default): by words alone.
	// EmbeddingsAPIKey is its bearer token, EmbeddingsModel its model
	// (required with the URL), EmbeddingsDimensions the vectors' length to
	// ask for (0: the model's own).
	EmbeddingsURL        string
	EmbeddingsAPIKey     string
	EmbeddingsModel      string
	EmbeddingsDimensions int
	// OperatorTokenHash is the SHA-256 of the operator's token, which the
	// operator API (/operator/...) takes as Authorization: Bearer:
	// PARLEY_OPERATOR_TOKEN (the token, of which only the digest is kept)
	// or PARLEY_OPERATOR_TOKEN_SHA256 (its digest in hex, so that the
	// server's environment never holds the token). nil: the API is off.
	OperatorTokenHash []byte
	// Heartbeat is how often the running server marks itself alive in the
	// instances table (Server.Run): a process silent for three beats counts
	// as dead, and the session leases of its turns are free. 0 means 5 s.
	// It is not read from the environment; tests shorten it.
	Heartbeat time.Duration
	// DrainDelay is how long a stopping server keeps serving with /readyz
	// answering 503, so that a load balancer stops sending it requests
	// before its port closes (PARLEY_DRAIN_DELAY, default 5 s; 0: the port
	// closes at once). A second SIGTERM or Ctrl-C ends the wait.
	DrainDelay time.Duration
	// Metrics is where the Prometheus metrics are served
	// (PARLEY_METRICS_*, config_metrics.go); off by default.
	Metrics MetricsConfig
	// Tracing is the traces' settings, from the OTEL_* variables
	// (tracing.FromEnv): off unless they name an OTLP exporter.
	Tracing tracing.Settings
	// Traces is the tracer provider of Tracing (OpenTraces), nil when
	// traces are off. It is not read from the environment; tests give
	// the SDK's in-memory exporter's.
	Traces trace.TracerProvider
	// ModelTLS is the TLS configuration of the connections to the managed
	// model (PARLEY_LLM_BASE_URL), nil for Go's defaults (the system's
	// roots). It is not read from the environment; benchmarks give their
	// fake model's certificate, to talk HTTP/2 to it as to a hosted model.
	ModelTLS *tls.Config `json:"-"`
	// SecretKeyPrevious is PARLEY_SECRET_KEY_PREVIOUS during a rotation of
	// the secret key: the box opens with it too, and seals with SecretKey.
	SecretKeyPrevious []byte
}

// defaultBodyTimeout is PARLEY_BODY_TIMEOUT's default: room for the largest
// upload (a 5 MiB CSV) over a slow line, not for a client that stopped.
const defaultBodyTimeout = 60 * time.Second

// defaultDrainDelay is PARLEY_DRAIN_DELAY's default: a load balancer that
// checks /readyz every second and takes two failures (HAProxy's `inter 1s
// fall 2`, deploy/haproxy) has stopped sending before it ends.
const defaultDrainDelay = 5 * time.Second

// knownVars are the PARLEY_ variables Parley reads; any other PARLEY_ name is a typo.
var knownVars = []string{
	"PARLEY_ADDR", "PARLEY_BASE_URL", "PARLEY_SECRET_KEY", "PARLEY_CDN_URL",
	"PARLEY_LLM_PROVIDER", "PARLEY_LLM_BASE_URL", "PARLEY_LLM_API_KEY", "PARLEY_LLM_MODEL",
	"PARLEY_SSRF_ALLOW", "PARLEY_TRUSTED_PROXIES", "PARLEY_CAPTCHA_VERIFY_URL",
	"PARLEY_CAPTCHA_SCRIPT_URL", "PARLEY_ADMIN_CAPTCHA_SITE_KEY", "PARLEY_ADMIN_CAPTCHA_SECRET_KEY",
	"PARLEY_DB_MAX_CONNS", "PARLEY_LOG_FORMAT", "PARLEY_SMTP_URL", "PARLEY_SIGNUP",
	"PARLEY_BODY_TIMEOUT", "PARLEY_MAX_CONNS_PER_ADDRESS", "PARLEY_STRIPE_API_URL",
	"PARLEY_VAPI_API_KEY", "PARLEY_VAPI_BASE_URL",
	"PARLEY_EMBEDDINGS_URL", "PARLEY_EMBEDDINGS_API_KEY", "PARLEY_EMBEDDINGS_MODEL", "PARLEY_EMBEDDINGS_DIMENSIONS",
	"PARLEY_OPERATOR_TOKEN", "PARLEY_OPERATOR_TOKEN_SHA256",
	"PARLEY_DRAIN_DELAY",
	"PARLEY_METRICS_ADDR", "PARLEY_METRICS_TOKEN", "PARLEY_METRICS_TOKEN_SHA256", "PARLEY_METRICS_TENANT_LABEL",
	"PARLEY_SECRET_KEY_PREVIOUS",
}

// scriptVars are PARLEY_ variables of the scripts and tests around Parley
// (make run's PARLEY_DEV_PG_PORT, make test's PARLEY_TEST_*, the
// benchmarks' PARLEY_BENCH_* and PARLEY_LOAD_*): the server does not read
// them, and they reach it in the environment make run and the benchmarks
// start it in, so they are not typos.
var scriptVars = []string{"PARLEY_DEV_PG_PORT"}

var scriptVarPrefixes = []string{"PARLEY_TEST_", "PARLEY_BENCH_", "PARLEY_LOAD_"}

func scriptVar(name string) bool {
	if slices.Contains(scriptVars, name) {
		return true
	}
	for _, p := range scriptVarPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// SignupModes are the values PARLEY_SIGNUP accepts.
var SignupModes = []string{"closed", "invite", "open"}

// LLMProviders are the values PARLEY_LLM_PROVIDER accepts.
var LLMProviders = []string{"local", "openai", "anthropic"}

// LoadConfig reads the configuration from getenv (os.Getenv in production) and
// validates it; every error names the variable. environ lists the variables
// set, to catch misspelt PARLEY_ names.
func LoadConfig(getenv func(string) string, environ []string) (Config, error) {
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "PARLEY_") && !scriptVar(name) && !slices.Contains(knownVars, name) && !fileVar(name) {
			return Config{}, fmt.Errorf("%s: unknown variable (known: %s)", name, strings.Join(knownVars, ", "))
		}
	}
	getenv, fileErr := ResolveFiles(getenv, os.ReadFile)
	if fileErr != nil {
		return Config{}, fileErr
	}
	get := func(name, def string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		return def
	}
	c := Config{
		DatabaseURL:           get("DATABASE_URL", ""),
		Addr:                  get("PARLEY_ADDR", ":8080"),
		LLMProvider:           get("PARLEY_LLM_PROVIDER", "local"),
		LLMBaseURL:            get("PARLEY_LLM_BASE_URL", ""),
		LLMAPIKey:             get("PARLEY_LLM_API_KEY", ""),
		LLMModel:              get("PARLEY_LLM_MODEL", ""),
		CaptchaVerifyURL:      get("PARLEY_CAPTCHA_VERIFY_URL", "https://challenges.cloudflare.com/turnstile/v0/siteverify"),
		CaptchaScriptURL:      get("PARLEY_CAPTCHA_SCRIPT_URL", "https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit"),
		AdminCaptchaSiteKey:   get("PARLEY_ADMIN_CAPTCHA_SITE_KEY", ""),
		AdminCaptchaSecretKey: get("PARLEY_ADMIN_CAPTCHA_SECRET_KEY", ""),
		LogFormat:             get("PARLEY_LOG_FORMAT", "json"),
		Signup:                get("PARLEY_SIGNUP", "closed"),
		VapiAPIKey:            get("PARLEY_VAPI_API_KEY", ""),
		EmbeddingsURL:         get("PARLEY_EMBEDDINGS_URL", ""),
		EmbeddingsAPIKey:      get("PARLEY_EMBEDDINGS_API_KEY", ""),
		EmbeddingsModel:       get("PARLEY_EMBEDDINGS_MODEL", ""),
		DBMaxConns:            DefaultDBMaxConns(runtime.GOMAXPROCS(0)),
		BodyTimeout:           defaultBodyTimeout,
		// MaxConnsPerAddress: room for a whole office behind one address,
		// each with a streamed answer open; not for thousands.
		MaxConnsPerAddress: 256,
		PasswordCost:       bcrypt.DefaultCost,
	}
	if c.DatabaseURL == "" {
		return c, fmt.Errorf("DATABASE_URL: required (make run starts a private cluster and sets it)")
	}
	if _, _, err := splitHostPort(c.Addr); err != nil {
		return c, fmt.Errorf("PARLEY_ADDR: %v", err)
	}
	_, port, _ := splitHostPort(c.Addr)
	var err error
	if c.BaseURL, err = checkURL("PARLEY_BASE_URL", get("PARLEY_BASE_URL", "http://localhost:"+port)); err != nil {
		return c, err
	}
	if c.CDNURL, err = checkURL("PARLEY_CDN_URL", get("PARLEY_CDN_URL", c.BaseURL)); err != nil {
		return c, err
	}
	if c.LLMBaseURL != "" {
		if c.LLMBaseURL, err = checkURL("PARLEY_LLM_BASE_URL", c.LLMBaseURL); err != nil {
			return c, err
		}
	}
	if c.VapiBaseURL, err = checkURL("PARLEY_VAPI_BASE_URL", get("PARLEY_VAPI_BASE_URL", "https://api.vapi.ai")); err != nil {
		return c, err
	}
	if c.StripeAPIURL, err = checkURL("PARLEY_STRIPE_API_URL", get("PARLEY_STRIPE_API_URL", stripe.DefaultURL)); err != nil {
		return c, err
	}
	if _, err := checkURL("PARLEY_CAPTCHA_VERIFY_URL", c.CaptchaVerifyURL); err != nil {
		return c, err
	}
	if _, err := checkURL("PARLEY_CAPTCHA_SCRIPT_URL", c.CaptchaScriptURL); err != nil {
		return c, err
	}
	if c.AdminCaptchaSiteKey == "" && c.AdminCaptchaSecretKey != "" {
		return c, fmt.Errorf("PARLEY_ADMIN_CAPTCHA_SITE_KEY: required with PARLEY_ADMIN_CAPTCHA_SECRET_KEY (the challenge's two keys)")
	}
	if c.AdminCaptchaSiteKey != "" && c.AdminCaptchaSecretKey == "" {
		return c, fmt.Errorf("PARLEY_ADMIN_CAPTCHA_SECRET_KEY: required with PARLEY_ADMIN_CAPTCHA_SITE_KEY (the challenge's two keys)")
	}
	if !slices.Contains(LLMProviders, c.LLMProvider) {
		return c, fmt.Errorf("PARLEY_LLM_PROVIDER: %q is not one of %s", c.LLMProvider, strings.Join(LLMProviders, ", "))
	}
	if c.LLMProvider != "local" && c.LLMModel == "" {
		// Model names change too often for a default to stay right; a wrong
		// one would only fail later, at the first chat message.
		return c, fmt.Errorf("PARLEY_LLM_MODEL: required when PARLEY_LLM_PROVIDER is %s (the model name your provider serves)", c.LLMProvider)
	}
	if c.LogFormat != "json" && c.LogFormat != "text" {
		return c, fmt.Errorf("PARLEY_LOG_FORMAT: %q is not json or text", c.LogFormat)
	}
	if s := getenv("PARLEY_SECRET_KEY"); s != "" {
		if c.SecretKey, err = auth.ParseKey(strings.TrimSpace(s)); err != nil {
			return c, fmt.Errorf("PARLEY_SECRET_KEY: %v", err)
		}
	}
	if err := c.loadPreviousKey(getenv); err != nil {
		return c, err
	}
	if c.SSRFAllow, err = parseCIDRs("PARLEY_SSRF_ALLOW", getenv("PARLEY_SSRF_ALLOW")); err != nil {
		return c, err
	}
	if c.TrustedProxies, err = parseCIDRs("PARLEY_TRUSTED_PROXIES", getenv("PARLEY_TRUSTED_PROXIES")); err != nil {
		return c, err
	}
	if s := getenv("PARLEY_DB_MAX_CONNS"); s != "" {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 1000 {
			return c, fmt.Errorf("PARLEY_DB_MAX_CONNS: %q is not an integer between 1 and 1000", s)
		}
		c.DBMaxConns = int32(n)
	}
	if s := strings.TrimSpace(getenv("PARLEY_BODY_TIMEOUT")); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 10*time.Millisecond || d > time.Hour {
			return c, fmt.Errorf("PARLEY_BODY_TIMEOUT: %q is not a duration between 10ms and 1h (such as 60s)", s)
		}
		c.BodyTimeout = d
	}
	c.DrainDelay = defaultDrainDelay
	if s := strings.TrimSpace(getenv("PARLEY_DRAIN_DELAY")); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 || d > 5*time.Minute {
			return c, fmt.Errorf("PARLEY_DRAIN_DELAY: %q is not a duration between 0s and 5m (such as 5s)", s)
		}
		c.DrainDelay = d
	}
	if s := getenv("PARLEY_MAX_CONNS_PER_ADDRESS"); s != "" {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 0 || n > 1_000_000 {
			return c, fmt.Errorf("PARLEY_MAX_CONNS_PER_ADDRESS: %q is not an integer between 0 (no cap) and 1000000", s)
		}
		c.MaxConnsPerAddress = n
	}
	if err := c.loadEmbeddings(get); err != nil {
		return c, err
	}
	if c.OperatorTokenHash, err = tokenHash(getenv, "PARLEY_OPERATOR_TOKEN"); err != nil {
		return c, err
	}
	if err := c.loadMetrics(getenv); err != nil {
		return c, err
	}
	if s := strings.TrimSpace(getenv("PARLEY_SMTP_URL")); s != "" {
		// mail.ParseURL's errors never repeat the URL, which holds the password.
		smtp, err := mail.ParseURL(s)
		if err != nil {
			return c, fmt.Errorf("PARLEY_SMTP_URL: %v", err)
		}
		c.SMTP = &smtp
	}
	if c.Tracing, err = tracing.FromEnv(getenv); err != nil {
		return c, err
	}
	if !slices.Contains(SignupModes, c.Signup) {
		return c, fmt.Errorf("PARLEY_SIGNUP: %q is not one of %s", c.Signup, strings.Join(SignupModes, ", "))
	}
	if c.Signup == "open" && c.SMTP == nil {
		// Open sign-up creates a workspace only once the emailed link is
		// followed: without mail nobody could ever finish.
		return c, fmt.Errorf("PARLEY_SIGNUP: open needs PARLEY_SMTP_URL, to mail the link that confirms a new owner's email (or use invite, whose links the operator can hand over)")
	}
	return c, nil
}

// loadEmbeddings checks the PARLEY_EMBEDDINGS_* variables: a model and a
// key, or dimensions, without a URL are a mistake (the operator meant
// embeddings on), as is a URL without a model.
func (c *Config) loadEmbeddings(get func(name, def string) string) error {
	dims := get("PARLEY_EMBEDDINGS_DIMENSIONS", "")
	if c.EmbeddingsURL == "" {
		for name, v := range map[string]string{"PARLEY_EMBEDDINGS_MODEL": c.EmbeddingsModel,
			"PARLEY_EMBEDDINGS_API_KEY": c.EmbeddingsAPIKey, "PARLEY_EMBEDDINGS_DIMENSIONS": dims} {
			if v != "" {
				return fmt.Errorf("%s: set without PARLEY_EMBEDDINGS_URL (the embedding API, such as https://api.openai.com/v1)", name)
			}
		}
		return nil
	}
	var err error
	if c.EmbeddingsURL, err = checkURL("PARLEY_EMBEDDINGS_URL", c.EmbeddingsURL); err != nil {
		return err
	}
	if c.EmbeddingsModel == "" {
		return fmt.Errorf("PARLEY_EMBEDDINGS_MODEL: required with PARLEY_EMBEDDINGS_URL (the embedding model your endpoint serves, such as text-embedding-3-small)")
	}
	if dims != "" {
		n, err := strconv.Atoi(dims)
		if err != nil || n < 1 || n > 16384 {
			return fmt.Errorf("PARLEY_EMBEDDINGS_DIMENSIONS: %q is not an integer between 1 and 16384", dims)
		}
		c.EmbeddingsDimensions = n
	}
	return nil
}

// SecureCookies reports whether cookies get the Secure flag: whenever the
// service is reached over HTTPS.
func (c Config) SecureCookies() bool { return strings.HasPrefix(c.BaseURL, "https://") }

func splitHostPort(addr string) (string, string, error) {
	i := strings.LastIndex(addr, ":")
	if i < 0 {
		return "", "", fmt.Errorf("%q must be host:port or :port", addr)
	}
	port := addr[i+1:]
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", "", fmt.Errorf("%q has no valid port", addr)
	}
	return addr[:i], port, nil
}

func checkURL(name, raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%s: %q is not an absolute http(s) URL", name, raw)
	}
	return strings.TrimRight(raw, "/"), nil
}

func parseCIDRs(name, raw string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(raw, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !strings.Contains(f, "/") {
			addr, err := netip.ParseAddr(f)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not a CIDR or address", name, f)
			}
			out = append(out, netip.PrefixFrom(addr, addr.BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a CIDR", name, f)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// MinOperatorToken is the shortest operator token PARLEY_OPERATOR_TOKEN
// takes: 32 characters, such as `openssl rand -hex 32`'s 64.
const MinOperatorToken = 32

// DefaultDBMaxConns is the database pool's size unless PARLEY_DB_MAX_CONNS
// says: four connections a core of the server's (GOMAXPROCS, which follows
// a container's CPU limit), at least 8 (River's workers share the pool)
// and at most 20. More connections than a small host's cores can run
// make PostgreSQL's backends wait on each other for the CPU and for the
// locks they hold meanwhile (a tenant's month's usage row): on 2 cores, 8
// connections against 20 gave ×1.18 first messages a second at c50 and
// PostgreSQL ×0.76 the CPU a turn (BENCHMARKS.md, issue 41).
func DefaultDBMaxConns(cores int) int32 {
	return int32(min(20, max(8, 4*cores)))
}
