package web

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley/db"
	"github.com/parley/parley/web/tracing"
)

// OpenTraces builds the tracer provider of cfg.Tracing (the OTEL_*
// variables) and sets it as cfg.Traces; traces off leave it nil. The
// returned function flushes the spans still buffered and stops the
// exporter: call it once the server has stopped.
func OpenTraces(ctx context.Context, cfg *Config) (func(context.Context) error, error) {
	p, err := tracing.New(ctx, cfg.Tracing)
	if err != nil {
		return nil, err
	}
	cfg.Traces = p.TracerProvider()
	return p.Shutdown, nil
}

// DBOptions are the options of db.Open for c's traces: the pool's SQL
// tracer and the jobs' middleware; none when traces are off.
func (c Config) DBOptions() []db.Option {
	if c.Traces == nil {
		return nil
	}
	return []db.Option{db.WithQueryTracer(tracing.QueryTracer(c.Traces)),
		db.WithJobMiddleware(tracing.JobMiddleware(c.Traces)...)}
}

// LogHandler is h with the trace and span ids of c's traces in the lines
// logged with a span's context; h itself when traces are off.
func (c Config) LogHandler(h slog.Handler) slog.Handler {
	return tracing.LogHandler(c.Traces, h)
}

// TracesDescription says where traces go, for the start-up log.
func (c Config) TracesDescription() string {
	sampler := cmp.Or(c.Tracing.Sampler, "parentbased_always_on")
	switch {
	case c.Traces == nil:
		return "off"
	case c.Tracing.Endpoint == "":
		return "OTLP to http://localhost:4318, sampler " + sampler
	default:
		return "OTLP to " + c.Tracing.Endpoint + ", sampler " + sampler
	}
}

// traceRequests puts the HTTP server's span on every request, before the
// request log (which then writes the span's ids), but the probes' and the
// metrics' scrapes; nothing when traces are off.
func (s *Server) traceRequests(e *echo.Echo) {
	if mw := tracing.Middleware(s.Config.Traces, "/healthz", "/readyz", "/metrics"); mw != nil {
		e.Use(mw)
	}
}

// wireTraces gives the engine (model calls, tools, the public gates) and
// the outgoing calls' clients the server's tracer provider; nothing when
// traces are off.
func (s *Server) wireTraces() {
	tp := s.Config.Traces
	if tp == nil {
		return
	}
	s.Base.Engine.Tracer = tp
	s.Base.Outbound.WrapTransport(func(rt http.RoundTripper) http.RoundTripper { return tracing.Transport(tp, rt) })
}
