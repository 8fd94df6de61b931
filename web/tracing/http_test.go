package tracing

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestMiddleware: a span per request named by its route, continuing the
// caller's traceparent, failed from 500 up; none for the probes.
func TestMiddleware(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	p := NewWithExporter(exp, false)
	e := echo.New()
	e.Use(Middleware(p.TracerProvider(), "/healthz"))
	e.GET("/healthz", func(c echo.Context) error { return c.NoContent(http.StatusOK) })
	e.GET("/things/:id", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	e.GET("/broken", func(c echo.Context) error { return errors.New("boom") })
	for _, path := range []string{"/healthz", "/things/ada@example.com", "/broken"} {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
		e.ServeHTTP(httptest.NewRecorder(), req)
	}
	spans := exp.GetSpans()
	if len(spans) != 2 || spans[0].Name != "GET /things/:id" || spans[1].Name != "GET /broken" {
		t.Fatalf("spans %v", spans)
	}
	if spans[0].SpanContext.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || spans[0].Parent.SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("the request's span does not continue the caller's trace")
	}
	if spans[0].Status.Code == codes.Error || spans[1].Status.Code != codes.Error {
		t.Errorf("statuses %v and %v", spans[0].Status, spans[1].Status)
	}
	for _, a := range spans[0].Attributes {
		if a.Value.String() == "/things/ada@example.com" {
			t.Errorf("the path itself is in the span: %v", a)
		}
	}
}
