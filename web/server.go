package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/alexedwards/scs/pgxstore"
	"github.com/alexedwards/scs/v2"
	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"
	"github.com/riverqueue/river"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/agent/outbound/mcpclient"
	"github.com/parley/parley/agent/outbound/stripe"
	"github.com/parley/parley/agent/outbound/vapi"
	"github.com/parley/parley/agent/testrun"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/live"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin"
	"github.com/parley/parley/handlers/api"
	"github.com/parley/parley/handlers/auditing"
	"github.com/parley/parley/handlers/idempotent"
	"github.com/parley/parley/handlers/mcpserver"
	"github.com/parley/parley/handlers/oauth"
	"github.com/parley/parley/handlers/operator"
	"github.com/parley/parley/handlers/public"
	"github.com/parley/parley/handlers/voice"
	"github.com/parley/parley/jobs"
	"github.com/parley/parley/mail"
	"github.com/parley/parley/manage"
	"github.com/parley/parley/web/metrics"
	"github.com/parley/parley/web/tracing"
)

// Server is one Parley instance: the Echo instance and what it serves with.
type Server struct {
	Echo   *echo.Echo
	Config Config
	DB     *db.DB
	Logger *slog.Logger
	// Base holds what the REST API's and the dashboard's handlers share
	// (tests set its Now and BaseURL).
	Base *handlers.Base
	// Admin answers the dashboard.
	Admin *admin.Handler
	// Public answers chat, the widget's settings, the lead form and the
	// agent context document.
	Public *public.Handler
	// API answers the management REST API.
	API *api.Handler
	// Audit records the dashboard's and the REST API's changes in the
	// audit log.
	Audit *auditing.Recorder
	// Idempotency keeps the answers of the REST API's creates sent with an
	// Idempotency-Key.
	Idempotency *idempotent.Keeper
	// MCP serves Parley's own MCP server, and its tools to chats.
	MCP *mcpserver.Handler
	// OAuth answers the authorization server's endpoints.
	OAuth *oauth.Handler
	// Voice answers the tenants' voice orchestrators.
	Voice *voice.Handler
	// Operator answers the operator API (plans, seats, every tenant's
	// usage), behind the operator's own token.
	Operator *operator.Handler
	// Live wakes the visitors' chat streams when their conversation
	// changes, on this instance, whichever instance changed it. Run closes
	// it when the server stops (tests: webtest closes it).
	Live *live.Hub
	Auth *auth.Authenticator
	// MCPAuth is Auth for the MCP server: the same credentials, with OAuth
	// access tokens issued for the MCP resource ({base}/mcp).
	MCPAuth  *auth.Authenticator
	Sessions *scs.SessionManager
	// Mail is the SMTP sender of PARLEY_SMTP_URL, nil when it is unset.
	Mail *mail.Sender
	// OAuthLimits are the authorization server's rate limits per address
	// (spec, Limits); tests lower them.
	OAuthLimits OAuthLimits
	// Listening, when set, is called once Run listens, with the address it
	// listens on (PARLEY_ADDR with its port chosen when that was 0):
	// parley serve prints its start-up banner from it.
	Listening func(addr net.Addr)

	// hurry ends the drain's wait (Hurry).
	hurry     chan struct{}
	hurryOnce sync.Once
	// Metrics counts what the server does for Prometheus (web/metrics);
	// nil when PARLEY_METRICS_* serve them nowhere.
	Metrics *metrics.Metrics
	// MetricsListening, when set, is called once Run listens on the
	// metrics' own address (PARLEY_METRICS_ADDR), with that address.
	MetricsListening func(addr net.Addr)
}

// OAuthLimits are the authorization server's limits per client address:
// registrations an hour, authorization requests, token and revocation
// requests a minute.
type OAuthLimits struct {
	Register, Authorize, Token, Revoke int
}

// DefaultOAuthLimits are the spec's: 5 registrations an hour, 20
// authorization requests and 30 token and revocation requests a minute.
var DefaultOAuthLimits = OAuthLimits{Register: 5, Authorize: 20, Token: 30, Revoke: 30}

// NewServer wires a server for cfg on an open database.
func NewServer(cfg Config, store *db.DB, logger *slog.Logger) (*Server, error) {
	if len(cfg.SecretKey) == 0 {
		return nil, errors.New("PARLEY_SECRET_KEY: required (64 hexadecimal characters; make run generates one under .data/)")
	}
	box, err := auth.NewRotatingBox(cfg.SecretKey, cfg.SecretKeyPrevious)
	if err != nil {
		return nil, fmt.Errorf("PARLEY_SECRET_KEY: %w", err)
	}
	sessions := scs.New()
	// The table keeps each session under its token's hash, not the cookie's value.
	sessions.Store = auth.HashedSessionStore{Store: pgxstore.NewWithCleanupInterval(store.Pool(), 10*time.Minute)}
	sessions.Lifetime = 12 * time.Hour
	sessions.IdleTimeout = 2 * time.Hour
	sessions.Cookie.Name = "parley_session"
	sessions.Cookie.HttpOnly = true
	sessions.Cookie.SameSite = http.SameSiteLaxMode
	sessions.Cookie.Secure = cfg.SecureCookies()
	sessions.Cookie.Path = "/admin"

	s := &Server{
		Echo:        echo.New(),
		Config:      cfg,
		DB:          store,
		Logger:      logger,
		Sessions:    sessions,
		OAuthLimits: DefaultOAuthLimits,
		hurry:       make(chan struct{}),
	}
	authServer := &auth.OAuth{DB: store, Keys: &auth.SigningKeys{DB: store, Box: box}, Issuer: cfg.BaseURL, Now: s.now}
	// The management API takes ak_ tokens and OAuth access tokens issued for
	// it; the MCP server, those issued for it.
	s.Auth = &auth.Authenticator{DB: store, JWT: authServer.VerifyAccessToken, Audience: cfg.BaseURL}
	mcpAuth := *s.Auth
	mcpAuth.Audience = cfg.BaseURL + handlers.MCPPath
	s.MCPAuth = &mcpAuth
	if cfg.SMTP != nil {
		s.Mail = mail.NewSender(*cfg.SMTP)
	}
	guard := outbound.New(cfg.SSRFAllow, nil)
	stripeClient := &stripe.Client{URL: cfg.StripeAPIURL, Guard: guard}
	// One address, logger and clock for every surface; the engine and the
	// authorization server read the same clock (s.now): tests set Base.Now.
	rt := &handlers.Runtime{BaseURL: cfg.BaseURL, Logger: logger}
	base := &handlers.Base{
		Runtime: rt, DB: store, Box: box, Sessions: sessions, Passwords: auth.NewPasswords(cfg.PasswordCost),
		CDNURL: cfg.CDNURL, Outbound: guard, OAuth: authServer,
		Engine: &agent.Engine{Store: store, LLM: managedProvider(cfg), Outbound: guard,
			Secrets: box, Verification: store, Calendar: store, Logger: logger, Now: s.now,
			Payments: store, Stripe: stripeClient, Takeover: store,
			MCP: &mcpclient.Client{Outbound: guard, Secrets: box, Now: s.now}},
		Captcha:          &auth.BotChallenge{URL: cfg.CaptchaVerifyURL},
		CaptchaScriptURL: cfg.CaptchaScriptURL,
		SignInChallenge:  handlers.SignInChallenge{SiteKey: cfg.AdminCaptchaSiteKey, SecretKey: cfg.AdminCaptchaSecretKey},
		ResetByEmail:     s.Mail != nil,
		SignUp:           cfg.Signup,
		Vapi:             vapi.Operator{APIKey: cfg.VapiAPIKey, BaseURL: cfg.VapiBaseURL},
		Stripe:           stripeClient,
	}
	s.Base = base
	s.Admin = admin.New(base)
	s.API = api.New(base)
	s.Audit = auditing.New(base)
	s.Idempotency = idempotent.New(base)
	s.Base.Manage = &manage.Service{DB: store, Box: box, Addresses: s.Base.Addresses()}
	s.MCP = &mcpserver.Handler{Runtime: rt, DB: store, Manage: s.Base.Manage, OAuth: s.Base.OAuth}
	s.Live = live.New(store.Pool(), logger)
	s.Public = &public.Handler{Runtime: rt, DB: store, Box: box, Engine: s.Base.Engine, Captcha: s.Base.Captcha,
		CaptchaScriptURL: cfg.CaptchaScriptURL, Outbound: guard, AdminTools: s.MCP.AdminChatTools,
		Live: s.Live, StreamKey: public.StreamKey(cfg.SecretKey)}
	s.Voice = &voice.Handler{Runtime: rt, DB: store, Box: box, Engine: s.Base.Engine}
	s.OAuth = &oauth.Handler{Runtime: rt, DB: store, Manage: s.Base.Manage, OAuth: s.Base.OAuth}
	s.Operator = &operator.Handler{Runtime: rt, Manage: s.Base.Manage, TokenHash: cfg.OperatorTokenHash}
	if s.Base.Engine.Embeddings = managedEmbedder(cfg); s.Base.Engine.Embeddings != nil {
		store.EnableEmbeddings()
	}
	if s.Mail != nil {
		s.Base.Engine.Mailer = codeMailer{s.Mail}
	} else {
		logger.Info("visitor verification by email code is off: PARLEY_SMTP_URL is unset, so tenants in visitorAuthMode otp or all are not offered SEND_VERIFICATION_CODE")
	}
	s.Echo.HideBanner = true
	s.Echo.HidePort = true
	s.Echo.HTTPErrorHandler = s.handleError
	s.Echo.JSONSerializer = jsonSerializer{}
	s.Echo.IPExtractor = ipExtractor(cfg.TrustedProxies)
	s.Metrics = s.newMetrics()
	s.wireTraces()
	s.routes()
	s.Metrics.Routes(s.Echo.Routes())
	return s, nil
}

// managedProvider is Parley's own model provider, from the configuration.
// The base URL is the operator's, so the calls need no SSRF guard.
func managedProvider(cfg Config) llm.Provider {
	// The operator's model server is trusted (it may be Ollama on localhost),
	// so it is not behind the SSRF guard; every chat turn reaches it, so keep
	// enough idle connections per host that concurrent turns reuse them
	// rather than dial (and, in production, shake hands) each time.
	client := &http.Client{Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 128,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
		// Over HTTP/1.1 a streamed answer holds its connection, and so the
		// connection's write buffer, for its whole length, though the buffer
		// only batched the request's headers and first kilobyte (the rest of
		// a body goes past it to the socket): 1 KiB instead of 4 saves 3 KiB
		// per open stream.
		WriteBufferSize: 1 << 10,
		// And its read buffer: an answer's events are gathered in the event
		// gate's own buffer (llm.gateMiddleware), which holds a whole event,
		// so this one only batches the chunked encoding's lines; 1 KiB
		// instead of 4 saves 3 KiB per open stream (BENCHMARKS.md: 80.7-81.2
		// to 77.5-79.5 KiB over HTTP/1.1). Reads of a kilobyte or more go
		// past it to the socket.
		ReadBufferSize:  1 << 10,
		TLSClientConfig: cfg.ModelTLS,
	}}
	switch cfg.LLMProvider {
	case "openai":
		return llm.NewOpenAI(llm.OpenAIConfig{BaseURL: cfg.LLMBaseURL, APIKey: cfg.LLMAPIKey, Model: cfg.LLMModel, HTTPClient: client})
	case "anthropic":
		return llm.NewAnthropic(llm.AnthropicConfig{BaseURL: cfg.LLMBaseURL, APIKey: cfg.LLMAPIKey, Model: cfg.LLMModel, HTTPClient: client})
	default:
		return agent.NewLocal()
	}
}

// managedEmbedder is the operator's embedding endpoint, nil when
// PARLEY_EMBEDDINGS_URL is unset. Trusted like the managed model (it may be
// Ollama on localhost): no SSRF guard. Every turn embeds its question
// through it, so idle connections are kept for concurrent turns.
func managedEmbedder(cfg Config) *llm.Embedder {
	if cfg.EmbeddingsURL == "" {
		return nil
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        128,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}}
	return llm.NewEmbedder(llm.EmbedderConfig{BaseURL: cfg.EmbeddingsURL, APIKey: cfg.EmbeddingsAPIKey,
		Model: cfg.EmbeddingsModel, Dimensions: cfg.EmbeddingsDimensions, HTTPClient: client})
}

// Run serves until ctx ends, with River working beside it, then drains
// in-flight requests and jobs. It registers the process as an instance
// (StartInstance) before it serves and removes it once drained.
func (s *Server) Run(ctx context.Context) error {
	// The first start generates the OAuth signing key; a key that does not
	// open stops the start. Ending ctx meanwhile is a shutdown.
	if err := s.Base.OAuth.Keys.Ensure(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("loading OAuth signing keys: %w", err)
	}
	ln, err := net.Listen("tcp", s.Config.Addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", s.Config.Addr, err)
	}
	stopInstance, err := s.StartInstance(ctx)
	if err != nil {
		_ = ln.Close()
		if ctx.Err() != nil {
			return nil // stopped while starting: a clean shutdown
		}
		return err
	}
	defer stopInstance()
	river, err := s.NewJobClient(jobs.Timing{})
	if err != nil {
		_ = ln.Close()
		return fmt.Errorf("creating job client: %w", err)
	}
	defer s.observeJobs(river)()
	stopMetrics, err := s.serveMetrics(ctx)
	if err != nil {
		_ = ln.Close()
		return err
	}
	defer stopMetrics()
	if err := river.Start(ctx); err != nil {
		_ = ln.Close()
		if ctx.Err() != nil {
			return nil // stopped while starting (River's driver saw the cancelled context)
		}
		return fmt.Errorf("starting jobs: %w", err)
	}
	// The visitors' streams listen from the start; they end as the
	// shutdown begins (each browser reconnects, to another instance), else
	// draining would wait for them.
	s.Live.Start()
	defer s.Live.Close()
	srv := s.HTTPServer(s.Config.Addr)
	srv.RegisterOnShutdown(s.Live.Close)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(s.LimitConns(ln)) }()
	s.Logger.Info("parley listening", "addr", ln.Addr().String(), "base_url", s.Config.BaseURL)
	if s.Listening != nil {
		s.Listening(ln.Addr())
	}

	select {
	case err := <-errc:
		_ = river.Stop(context.Background())
		return fmt.Errorf("listening on %s: %w", s.Config.Addr, err)
	case <-ctx.Done():
	}
	s.drain(srv)
	s.Logger.Info("shutting down: finishing requests and jobs")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The port closes and the open requests finish (a turn's stream ends
	// with its answer; the visitors' idle streams end at once, and their
	// browsers reconnect to another instance), while River stops fetching
	// and lets its running jobs finish: a job not yet fetched is left for
	// another instance, one that cannot finish in time is cancelled and
	// retried there.
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := srv.Shutdown(shutdownCtx); err != nil {
			s.Logger.Error("shutdown incomplete", "err", err)
		}
	})
	wg.Go(func() {
		if err := river.Stop(shutdownCtx); err != nil {
			s.Logger.Error("stopping jobs", "err", err)
			_ = river.StopAndCancel(context.Background())
		}
	})
	wg.Wait()
	return nil
}

// drain is the first step of a shutdown: /readyz answers 503 and the
// connections are no longer kept alive, while everything else is served as
// before, for the configuration's DrainDelay (or until Hurry), so that a
// load balancer checking /readyz stops sending requests here before the
// port closes.
func (s *Server) drain(srv *http.Server) {
	s.Base.Draining.Store(true)
	srv.SetKeepAlivesEnabled(false)
	if s.Config.DrainDelay <= 0 {
		return
	}
	s.Logger.Info("draining: /readyz answers 503 before the port closes", "drain_delay", s.Config.DrainDelay.String())
	t := time.NewTimer(s.Config.DrainDelay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.hurry:
	}
}

// Hurry ends the drain's wait of a stopping server at once (parley serve
// calls it on a second SIGTERM or Ctrl-C); before a shutdown begins, it
// makes the coming drain end at once.
func (s *Server) Hurry() { s.hurryOnce.Do(func() { close(s.hurry) }) }

// NewJobClient builds the River client that works the server's jobs, with
// its outbound guard, its mail sender and its clock for reset links.
func (s *Server) NewJobClient(timing jobs.Timing) (*river.Client[pgx.Tx], error) {
	return jobs.NewClient(s.DB, s.Base.Box, s.Base.Outbound,
		jobs.Mail{Sender: s.Mail, BaseURL: s.Config.BaseURL, Now: s.now}, s.JobEmbeddings(), &testrun.Runner{Engine: s.Base.Engine}, s.Logger, timing, s.jobObservers(),
		tracing.JobMiddleware(s.Config.Traces)...)
}

// JobEmbeddings are the endpoints the embedding jobs embed at: the
// operator's, if configured, and each tenant's own (llm.EmbedderFor,
// reached through the outbound guard).
func (s *Server) JobEmbeddings() jobs.Embeddings {
	embed := jobs.Embeddings{Own: func(t parley.Tenant) (jobs.Embedder, error) {
		e, err := llm.EmbedderFor(t, nil, s.Base.Box, s.Base.Outbound)
		if e == nil {
			return nil, err
		}
		return e, err
	}}
	if s.Base.Engine.Embeddings != nil {
		embed.Operator = s.Base.Engine.Embeddings
	}
	return embed
}

// now is the server's clock: the surfaces' (Base.Now, which tests set),
// else the time.
func (s *Server) now() time.Time {
	if s.Base != nil && s.Base.Now != nil {
		return s.Base.Now()
	}
	return time.Now()
}

// codeMailer sends the engine's verification codes through the SMTP sender.
type codeMailer struct{ s *mail.Sender }

func (m codeMailer) SendMail(ctx context.Context, to, subject, body string) error {
	return m.s.Send(ctx, mail.Message{To: to, Subject: subject, Body: body})
}
