// Package tracing is Parley's OpenTelemetry traces: the tracer provider
// built from the standard OTEL_* variables (off unless they ask for an OTLP
// exporter), and what puts spans on a request's way: the HTTP middleware
// (one span per request, named by its route, continuing a W3C traceparent),
// the SQL tracer of the pgx pool (a span per statement or batch), the River
// middleware (a job's span continues the trace that enqueued it), the
// transport of outgoing calls, and the log handler that writes trace_id and
// span_id into every line logged with a span's context.
//
// Everything here takes a trace.TracerProvider; nil is tracing off, and
// each constructor then returns what costs nothing (no middleware, no
// tracer, the handler as it was). Nothing is global: otel's global provider
// and propagator are never set.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of Parley's spans.
const ScopeName = "github.com/parley/parley"

// DefaultServiceName is service.name when OTEL_SERVICE_NAME (or
// OTEL_RESOURCE_ATTRIBUTES' service.name) does not set one.
const DefaultServiceName = "parley"

// Samplers are the values OTEL_TRACES_SAMPLER takes; the default is
// parentbased_always_on.
var Samplers = []string{"always_on", "always_off", "traceidratio",
	"parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"}

// Settings are the traces' configuration, read from the OTEL_* variables by
// FromEnv; the zero value is off, with the default sampler. The OTLP
// exporter's own variables (headers, timeout, compression, certificates)
// are read by the exporter itself.
type Settings struct {
	// On says spans are exported through OTLP over HTTP.
	On bool
	// Endpoint is the variable that named the collector, for the start-up
	// log ("" for the exporter's default, http://localhost:4318).
	Endpoint string
	// Sampler is OTEL_TRACES_SAMPLER, "" for its default
	// (parentbased_always_on); Ratio its argument, for the ratio samplers.
	Sampler string
	Ratio   float64
}

// FromEnv reads the traces' settings from getenv (os.Getenv in
// production). Traces are on when OTEL_TRACES_EXPORTER is otlp, or when it
// is unset and OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set; OTEL_TRACES_EXPORTER=none and
// OTEL_SDK_DISABLED=true turn them off. A value Parley cannot honour is an
// error naming the variable, whether traces are on or not (the SDK would
// log it and fall back to its default: a start-up error is clearer).
func FromEnv(getenv func(string) string) (Settings, error) {
	get := func(name string) string { return strings.TrimSpace(getenv(name)) }
	s := Settings{Sampler: get("OTEL_TRACES_SAMPLER")}
	if strings.HasSuffix(s.Sampler, "traceidratio") {
		s.Ratio = 1
		if arg := get("OTEL_TRACES_SAMPLER_ARG"); arg != "" {
			r, err := strconv.ParseFloat(arg, 64)
			if err != nil || r < 0 || r > 1 {
				return s, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG: %q is not a ratio between 0 and 1 (such as 0.25)", arg)
			}
			s.Ratio = r
		}
	}
	if s.SamplerFunc() == nil {
		return s, fmt.Errorf("OTEL_TRACES_SAMPLER: %q is not one of %s", s.Sampler, strings.Join(Samplers, ", "))
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		if v := get(name); v != "" {
			if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return s, fmt.Errorf("%s: %q is not an absolute http(s) URL (such as http://localhost:4318)", name, v)
			}
			if s.Endpoint == "" {
				s.Endpoint = name
			}
		}
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if v := get(name); v != "" && v != "http/protobuf" {
			return s, fmt.Errorf("%s: %q is not supported: Parley exports traces as http/protobuf (OTLP over HTTP, port 4318 by default)", name, v)
		}
	}
	switch exp := strings.ToLower(get("OTEL_TRACES_EXPORTER")); exp {
	case "":
		s.On = s.Endpoint != ""
	case "otlp":
		s.On = true
	case "none":
		s.On = false
	default:
		return s, fmt.Errorf("OTEL_TRACES_EXPORTER: %q is not otlp or none (Parley exports traces through OTLP only)", exp)
	}
	switch v := strings.ToLower(get("OTEL_SDK_DISABLED")); v {
	case "", "false":
	case "true":
		s.On = false
	default:
		return s, fmt.Errorf("OTEL_SDK_DISABLED: %q is not true or false", v)
	}
	return s, nil
}

// SamplerFunc is the sampler of OTEL_TRACES_SAMPLER with its argument, as
// the specification defines them; nil for a name it does not know (the
// SDK's remote samplers, jaeger_remote and xray, are not built in).
func (s Settings) SamplerFunc() sdktrace.Sampler {
	switch s.Sampler {
	case "always_on":
		return sdktrace.AlwaysSample()
	case "always_off":
		return sdktrace.NeverSample()
	case "traceidratio":
		return sdktrace.TraceIDRatioBased(s.Ratio)
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample())
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample())
	case "parentbased_traceidratio":
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(s.Ratio))
	}
	return nil
}

// Provider is the process's tracer provider: the SDK's, exporting through
// OTLP, or none when traces are off.
type Provider struct {
	sdk *sdktrace.TracerProvider
}

// New builds the provider of s: nothing when s is off (TracerProvider is
// then nil), else the SDK's with a batching OTLP/HTTP exporter (which reads
// its own OTEL_EXPORTER_OTLP_* variables) and the resource of
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES. Nothing is sent until a
// span ends; an unreachable collector loses spans, never requests.
func New(ctx context.Context, s Settings) (*Provider, error) {
	if !s.On {
		return &Provider{}, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_*: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", DefaultServiceName)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	return &Provider{sdk: sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res), sdktrace.WithSampler(s.SamplerFunc()))}, nil
}

// NewWithExporter is a provider exporting to exp, every span sampled: tests
// and benchmarks give the SDK's in-memory exporter. With batch, spans are
// batched as New's are; without, each is exported as it ends.
func NewWithExporter(exp sdktrace.SpanExporter, batch bool) *Provider {
	opt := sdktrace.WithSyncer(exp)
	if batch {
		opt = sdktrace.WithBatcher(exp)
	}
	return &Provider{sdk: sdktrace.NewTracerProvider(opt, sdktrace.WithSampler(sdktrace.AlwaysSample()))}
}

// TracerProvider is the provider to give the server, nil when traces are
// off.
func (p *Provider) TracerProvider() trace.TracerProvider {
	if p == nil || p.sdk == nil {
		return nil
	}
	return p.sdk
}

// Shutdown exports the spans still buffered and stops the exporter,
// waiting at most until ctx ends; once the server has stopped.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil || p.sdk == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return p.sdk.Shutdown(ctx)
}

// Tracer is Parley's tracer of tp, nil when tp is nil.
func Tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		return nil
	}
	return tp.Tracer(ScopeName)
}

// propagator carries the trace across processes: W3C traceparent and
// tracestate.
var propagator = propagation.TraceContext{}

// errorStatus marks span as failed with err's message.
func errorStatus(span trace.Span, err error) {
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
}

// verb is the first word of a SQL statement, upper-cased (SELECT, INSERT,
// WITH, ...): the statement's name in its span, never its values.
func verb(sql string) string {
	sql = strings.TrimLeft(sql, " \t\r\n(")
	for strings.HasPrefix(sql, "--") {
		_, rest, _ := strings.Cut(sql, "\n")
		sql = strings.TrimLeft(rest, " \t\r\n(")
	}
	end := strings.IndexFunc(sql, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_')
	})
	if end < 0 {
		end = len(sql)
	}
	w := strings.ToUpper(sql[:end])
	if w == "" || len(w) > 12 || !slices.Contains(sqlVerbs, w) {
		return "SQL"
	}
	return w
}

// sqlVerbs are the statements' first words a span is named by; any other
// is "SQL".
var sqlVerbs = []string{"SELECT", "INSERT", "UPDATE", "DELETE", "WITH", "BEGIN", "COMMIT", "ROLLBACK",
	"SAVEPOINT", "RELEASE", "LISTEN", "UNLISTEN", "NOTIFY", "SET", "COPY", "VALUES", "MERGE", "LOCK", "TRUNCATE"}
