package tracing

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Middleware starts one server span per request, named by its method and
// route template (c.Path(), such as "POST /chat/:slug": never the path
// itself, which holds ids), continuing the trace of the request's W3C
// traceparent header if it has one. The request's context carries the span
// from there: the handlers, their SQL and the request's log line. Its
// status is the answer's: an error from 500 up. nil when tp is nil: no
// middleware.
//
// It runs after routing (Echo's Use) and before the request log, which
// then writes the span's ids. The routes of untraced (probes and scrapes:
// /healthz, /readyz) get no span.
func Middleware(tp trace.TracerProvider, untraced ...string) echo.MiddlewareFunc {
	if tp == nil {
		return nil
	}
	tracer := Tracer(tp)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			route := c.Path()
			if slices.Contains(untraced, route) {
				return next(c)
			}
			req := c.Request()
			ctx := propagator.Extract(req.Context(), propagation.HeaderCarrier(req.Header))
			if route == "" {
				route = "unmatched"
			}
			ctx, span := tracer.Start(ctx, req.Method+" "+route, trace.WithSpanKind(trace.SpanKindServer),
				trace.WithAttributes(attribute.String("http.request.method", req.Method),
					attribute.String("http.route", route)))
			defer span.End()
			c.SetRequest(req.WithContext(ctx))
			err := next(c)
			if err != nil {
				c.Error(err) // write the answer now, so that its status is the span's
			}
			status := c.Response().Status
			span.SetAttributes(attribute.Int("http.response.status_code", status))
			if status >= http.StatusInternalServerError {
				span.SetStatus(codes.Error, strconv.Itoa(status))
			}
			return nil
		}
	}
}

// Transport wraps base, the transport of outgoing calls (agent/outbound's
// guarded client: tenants' endpoints, webhooks, MCP servers, fetches), so
// that each call made within a span gets a client span of its own and
// carries the trace to the peer in a traceparent header. Calls outside any
// span pass as they were. base itself when tp is nil.
func Transport(tp trace.TracerProvider, base http.RoundTripper) http.RoundTripper {
	if tp == nil {
		return base
	}
	return &transport{base: base, tracer: Tracer(tp)}
}

type transport struct {
	base   http.RoundTripper
	tracer trace.Tracer
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if !trace.SpanFromContext(ctx).IsRecording() {
		return t.base.RoundTrip(req)
	}
	ctx, span := t.tracer.Start(ctx, req.Method, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("http.request.method", req.Method),
			attribute.String("server.address", req.URL.Hostname())))
	defer span.End()
	// RoundTrip must not change the caller's request: the header goes on a copy.
	req = req.Clone(ctx)
	propagator.Inject(ctx, propagation.HeaderCarrier(req.Header))
	res, err := t.base.RoundTrip(req)
	if err != nil {
		errorStatus(span, err)
		return res, err
	}
	span.SetAttributes(attribute.Int("http.response.status_code", res.StatusCode))
	if res.StatusCode >= http.StatusBadRequest {
		span.SetStatus(codes.Error, strconv.Itoa(res.StatusCode))
	}
	return res, nil
}
