package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"
	"github.com/riverqueue/river"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/jobs"
	"github.com/parley/parley/web/metrics"
)

// MetricsPath is where the Prometheus metrics are served, on their own
// address and, behind the metrics token, on the main one.
const MetricsPath = "/metrics"

// errMetricsOff answers /metrics on the main address without a metrics
// token configured: metrics are never public by default.
var errMetricsOff = &parley.Error{Kind: parley.KindNotFound, Code: "METRICS_OFF",
	Message: "Metrics are not served here: set PARLEY_METRICS_TOKEN on the server to serve them at this address behind a token, or PARLEY_METRICS_ADDR to serve them on an address of their own"}

// errMetricsToken answers /metrics without the metrics token.
var errMetricsToken = &parley.Error{Kind: parley.KindUnauthorized,
	Message: "Missing or wrong metrics token: send PARLEY_METRICS_TOKEN as Authorization: Bearer <token>"}

// newMetrics builds the server's metrics when the configuration serves
// them, and hands the engine the observer; nil when metrics are off.
func (s *Server) newMetrics() *metrics.Metrics {
	if !s.Config.Metrics.On() {
		return nil
	}
	m := metrics.New(metrics.Options{TenantLabel: s.Config.Metrics.TenantLabel, Backlog: s.DB.Backlog,
		Queues: jobs.Queues, Pool: s.DB.Pool(), Streams: s.Live.Subscribers, Logger: s.Logger})
	s.Base.Engine.Observer = m
	return m
}

// jobObservers are what the jobs report to: the metrics, when on.
func (s *Server) jobObservers() jobs.Observers {
	if s.Metrics == nil {
		return jobs.Observers{}
	}
	return jobs.Observers{Deliveries: s.Metrics}
}

// observeJobs times the jobs of client in the metrics, when on, until the
// returned func is called.
func (s *Server) observeJobs(client *river.Client[pgx.Tx]) func() {
	if s.Metrics == nil {
		return func() {}
	}
	events, cancel := client.Subscribe(metrics.JobEvents...)
	go s.Metrics.ObserveJobs(events)
	return cancel
}

// metricsMiddleware counts every request in the metrics, when on.
func (s *Server) metricsMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	if s.Metrics == nil {
		return next
	}
	return s.Metrics.Middleware(next)
}

// ShowMetrics is GET /metrics on the main address: the metrics, for a
// request carrying the metrics token (compared in constant time, both
// sides hashed, as the operator's); 404 without a token configured.
func (s *Server) ShowMetrics(c echo.Context) error {
	want := s.Config.Metrics.TokenHash
	if s.Metrics == nil || len(want) == 0 {
		return errMetricsOff
	}
	if !handlers.BearerMatches(c.Request(), want) {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="parley-metrics"`)
		return errMetricsToken
	}
	s.Metrics.Handler().ServeHTTP(c.Response(), c.Request())
	return nil
}

// noteRefusal counts a request a limit refused: 429 per address (its
// Retry-After), the monthly conversations and the plan's other limits
// (LIMIT_REACHED), 402 for what the plan does not include.
func (s *Server) noteRefusal(err error, status int) {
	if s.Metrics == nil || status != http.StatusTooManyRequests && status != http.StatusPaymentRequired {
		return
	}
	var e *parley.Error
	if !errors.As(err, &e) {
		return
	}
	switch _, perAddress := handlers.RetryAfterSeconds(err); {
	case status == http.StatusPaymentRequired:
		s.Metrics.Refused(metrics.LimitNotIncluded)
	case perAddress:
		s.Metrics.Refused(metrics.LimitPerAddress)
	case e.Code == "LIMIT_REACHED":
		if _, monthly := e.Details.(parley.LimitDetails); monthly {
			s.Metrics.Refused(metrics.LimitMonthly)
		} else {
			s.Metrics.Refused(metrics.LimitPlan)
		}
	}
}

// serveMetrics serves the metrics on their own address
// (PARLEY_METRICS_ADDR) until ctx ends; nil when there is none. The
// listener is opened before it returns, so that a taken address stops
// the start.
func (s *Server) serveMetrics(ctx context.Context) (func(), error) {
	addr := s.Config.Metrics.Addr
	if s.Metrics == nil || addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("PARLEY_METRICS_ADDR: listening on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+MetricsPath, s.Metrics.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.Logger.Error("serving metrics", "addr", addr, "err", err)
		}
	}()
	s.Logger.Info("metrics listening", "addr", ln.Addr().String(), "path", MetricsPath)
	if s.MetricsListening != nil {
		s.MetricsListening(ln.Addr())
	}
	return func() {
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	}, nil
}
