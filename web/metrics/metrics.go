// Package metrics is Parley's Prometheus metrics: one registry per server
// (there is no global one), its collectors, the HTTP middleware that counts
// requests by route template, the observers the engine and the jobs report
// to (agent.Observer, jobs.DeliveryObserver), and the /metrics handler.
//
// Labels hold only values from bounded sets Parley defines (route
// templates, methods, status codes, channels, outcomes, provider kinds,
// tool types, job kinds and queues), never a tenant's text: a value from
// outside those sets is counted as "other". The tenant's slug labels chat
// turns only when the operator opts in (Options.TenantLabel), since every
// tenant then adds series.
package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/riverqueue/river"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
	"github.com/parley/parley/db"
	"github.com/parley/parley/jobs"
)

// Other is the label value of anything outside a label's known set.
const Other = "other"

// Limits that refuse a request (the limit label of
// parley_limit_refusals_total).
const (
	LimitPerAddress  = "per_address"           // 429: too many requests from one address
	LimitMonthly     = "monthly_conversations" // 429 LIMIT_REACHED: the plan's conversations this month
	LimitPlan        = "plan_limit"            // 429 LIMIT_REACHED: another of the plan's limits (segments, entries, members...)
	LimitNotIncluded = "not_in_plan"           // 402: the plan does not include it
)

var limits = []string{LimitPerAddress, LimitMonthly, LimitPlan, LimitNotIncluded}

// channels are the conversation channels a turn runs on.
var channels = []string{parley.ChannelWeb, parley.ChannelAgent, parley.ChannelVoice, parley.ChannelAPI, Other}

// providers are the kinds of model provider (llm.Provider's Name).
var providers = []string{"openai", "anthropic", "webhook", "local", Other}

// methods are the HTTP methods counted by name.
var methods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions}

// Options configure a server's metrics.
type Options struct {
	// TenantLabel adds the tenant's slug to the chat turns' counter
	// (PARLEY_METRICS_TENANT_LABEL=1): one more series per tenant.
	TenantLabel bool
	// Backlog reads the jobs waiting and the oldest pending webhook
	// delivery at each scrape; nil reads nothing.
	Backlog func(context.Context) (db.Backlog, error)
	// Queues are the River queues, whose depth is reported even when
	// empty.
	Queues []string
	// Pool is the database pool whose use is reported; nil reports none.
	Pool *pgxpool.Pool
	// Streams counts the visitors' open live streams; nil reports none.
	Streams func() int
	// Logger logs a failed scrape-time read.
	Logger *slog.Logger
}

// Metrics holds a server's registry and its collectors. Its methods are
// safe for concurrent use, and a nil *Metrics observes nothing.
type Metrics struct {
	reg     *prometheus.Registry
	handler http.Handler
	opts    Options
	// routes are the route templates (Echo's c.Path()) counted by name;
	// any other path is Other. series are the series of each route and
	// method of the route table, resolved as first used. Both are set once
	// by Routes, before serving.
	routes map[string]bool
	series map[routeKey]*routeSeries
	// codes are the status codes' label values, so that a request's does
	// not allocate; slots, each common code's place in routeSeries.codes
	// (-1: none).
	codes [600]string
	slots [600]int8

	requests        *prometheus.CounterVec
	requestDuration *prometheus.HistogramVec

	turns         *prometheus.CounterVec
	turnChildren  map[string]map[string]prometheus.Counter // channel, outcome
	turnDuration  map[string]prometheus.Observer           // channel
	firstText     map[string]prometheus.Observer           // channel
	modelCalls    map[string]map[string]prometheus.Counter // provider, outcome
	modelDuration map[string]prometheus.Observer           // provider
	tokensIn      map[string]prometheus.Counter            // provider
	tokensOut     map[string]prometheus.Counter            // provider
	toolCalls     *prometheus.CounterVec
	toolChildren  map[string][2]prometheus.Counter // tool type: failure, success
	deliveries    map[string]prometheus.Counter    // outcome
	refusals      map[string]prometheus.Counter    // limit
	jobRuns       *prometheus.HistogramVec
	jobWaits      *prometheus.HistogramVec
}

// New builds the metrics of one server, in a registry of their own.
func New(opts Options) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), opts: opts}
	for i := range m.codes {
		m.codes[i] = strconv.Itoa(i)
		m.slots[i] = int8(slices.Index(commonCodes[:], i))
	}
	f := factory{m.reg}
	m.requests = f.counterVec("parley_http_requests_total",
		"HTTP requests answered, by route (the route's pattern, such as /chat/:slug), method and status code.",
		"route", "method", "code")
	m.requestDuration = f.histogramVec("parley_http_request_duration_seconds",
		"Time to answer an HTTP request, by route and method; a streamed chat answer counts until its end.",
		prometheus.DefBuckets, "route", "method")

	turnLabels := []string{"channel", "outcome"}
	if opts.TenantLabel {
		turnLabels = append(turnLabels, "tenant")
	}
	m.turns = f.counterVec("parley_chat_turns_total",
		"Chat messages the assistant handled, by channel and how the turn ended (answered, escalated, left_to_person, limit_reached, busy, client_gone, model_error, not_stored, failed).",
		turnLabels...)
	turnDuration := f.histogramVec("parley_chat_turn_duration_seconds",
		"Time from a chat message's arrival at the engine to the end of its answer, by channel.",
		[]float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120}, "channel")
	firstText := f.histogramVec("parley_chat_time_to_first_token_seconds",
		"Time from a chat message's arrival at the engine to the first words of its answer, by channel.",
		[]float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30}, "channel")
	m.turnChildren, m.turnDuration, m.firstText = map[string]map[string]prometheus.Counter{}, map[string]prometheus.Observer{}, map[string]prometheus.Observer{}
	for _, ch := range channels {
		m.turnDuration[ch] = turnDuration.WithLabelValues(ch)
		m.firstText[ch] = firstText.WithLabelValues(ch)
		if !opts.TenantLabel {
			m.turnChildren[ch] = children(m.turns, agent.TurnOutcomes, ch)
		}
	}

	modelCalls := f.counterVec("parley_model_calls_total",
		"Calls to the language model, by provider kind (openai, anthropic, webhook: a tenant's reply endpoint, local) and result (ok, or why it failed: auth, rate_limited, timeout, upstream, bad_request, unreachable, canceled, error).",
		"provider", "result")
	modelDuration := f.histogramVec("parley_model_call_duration_seconds",
		"Time of one call to the language model, from the request to its last word, by provider kind.",
		[]float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120}, "provider")
	tokens := f.counterVec("parley_model_tokens_total",
		"Tokens the language model reported using, by provider kind and direction (input: the prompt; output: the answer); providers that report none add nothing.",
		"provider", "direction")
	m.modelCalls, m.modelDuration, m.tokensIn, m.tokensOut = map[string]map[string]prometheus.Counter{}, map[string]prometheus.Observer{}, map[string]prometheus.Counter{}, map[string]prometheus.Counter{}
	for _, p := range providers {
		m.modelCalls[p] = children(modelCalls, agent.ModelOutcomes, p)
		m.modelDuration[p] = modelDuration.WithLabelValues(p)
		m.tokensIn[p] = tokens.WithLabelValues(p, "input")
		m.tokensOut[p] = tokens.WithLabelValues(p, "output")
	}

	m.toolCalls = f.counterVec("parley_tool_calls_total",
		"Tools the assistant ran, by tool type (SUBMIT_FORM, BOOK_MEETING, MCP_PROXY...) and outcome (success, failure).",
		"tool_type", "outcome")
	m.toolChildren = map[string][2]prometheus.Counter{}
	for _, t := range slices.Concat(parley.UserToolTypes, parley.SyntheticToolTypes, []string{agent.FormOfferType, Other}) {
		m.toolChildren[t] = [2]prometheus.Counter{m.toolCalls.WithLabelValues(t, "failure"), m.toolCalls.WithLabelValues(t, "success")}
	}

	deliveries := f.counterVec("parley_webhook_delivery_attempts_total",
		"Webhook delivery attempts, by outcome (delivered; retrying: failed, another attempt is scheduled; failed: the last attempt failed).",
		"outcome")
	m.deliveries = children(deliveries, jobs.DeliveryOutcomes)
	refusals := f.counterVec("parley_limit_refusals_total",
		"Requests refused by a limit, by limit (per_address: too many from one address; monthly_conversations: the plan's conversations this month; plan_limit: another of the plan's limits; not_in_plan: the plan does not include it).",
		"limit")
	m.refusals = children(refusals, limits)

	m.jobRuns = f.histogramVec("parley_job_duration_seconds",
		"Time a background job ran, by kind, queue and outcome (completed, retryable, discarded, cancelled, snoozed).",
		[]float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}, "kind", "queue", "outcome")
	m.jobWaits = f.histogramVec("parley_job_queue_wait_seconds",
		"Time a background job waited in its queue, from when it could run to when it started, by kind and queue.",
		[]float64{0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900}, "kind", "queue")

	if opts.Streams != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "parley_visitor_streams_open",
			Help: "Visitors' live chat streams open on this instance (GET /chat/{slug}/stream)."},
			func() float64 { return float64(opts.Streams()) }))
	}
	m.reg.MustRegister(newScrapeCollector(opts))
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorLog: errorLog{opts.Logger},
		ErrorHandling: promhttp.ContinueOnError, Timeout: 10 * time.Second})
	return m
}

// Handler serves the metrics in Prometheus' text format.
func (m *Metrics) Handler() http.Handler { return m.handler }

// Registry is the server's registry (tests gather from it).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Routes sets the route templates counted by name: those of the server's
// route table. Call it once, before serving.
func (m *Metrics) Routes(routes []*echo.Route) {
	if m == nil {
		return
	}
	m.routes, m.series = map[string]bool{}, map[routeKey]*routeSeries{}
	for _, r := range routes {
		m.routes[r.Path] = true
		if slices.Contains(methods, r.Method) {
			m.series[routeKey{r.Path, r.Method}] = &routeSeries{route: r.Path, method: r.Method}
		}
	}
}

// commonCodes are the status codes whose series a route keeps at hand.
var commonCodes = [...]int{200, 201, 202, 204, 206, 301, 302, 303, 304, 307, 308, 400, 401, 402, 403, 404, 405,
	406, 409, 410, 412, 413, 415, 422, 429, 500, 502, 503, 504}

// routeKey is a route of the table: its template and method.
type routeKey struct{ path, method string }

// routeSeries are a route's series, each resolved the first time it is
// used (a series resolved in advance would be exported at 0 for every
// route and code), then read without looking its labels up.
type routeSeries struct {
	route, method string
	duration      atomic.Pointer[observerBox]
	codes         [len(commonCodes)]atomic.Pointer[counterBox]
}

type observerBox struct{ prometheus.Observer }

type counterBox struct{ prometheus.Counter }

// Middleware counts and times every request by its route's template (never
// its URL), method and status. It runs outside the logging middleware,
// which writes a failed request's answer, so the status it reads is final.
func (m *Metrics) Middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		m.observeRequest(c, start)
		return err
	}
}

// observeRequest counts a served request (its own function, so that the
// middleware's frame, under which a chat stream runs, stays small).
func (m *Metrics) observeRequest(c echo.Context, start time.Time) {
	status := c.Response().Status
	if rs := m.series[routeKey{c.Path(), c.Request().Method}]; rs != nil && status > 0 && status < len(m.slots) && m.slots[status] >= 0 {
		rs.observe(m, status, time.Since(start))
		return
	}
	route := c.Path()
	if !m.routes[route] {
		route = Other
	}
	method := c.Request().Method
	if !slices.Contains(methods, method) {
		method = Other
	}
	code := Other
	if status > 0 && status < len(m.codes) {
		code = m.codes[status]
	}
	m.requests.WithLabelValues(route, method, code).Inc()
	m.requestDuration.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
}

// observe counts a request of the route answered status, a common code.
func (rs *routeSeries) observe(m *Metrics, status int, took time.Duration) {
	slot := &rs.codes[m.slots[status]]
	c := slot.Load()
	if c == nil {
		slot.CompareAndSwap(nil, &counterBox{m.requests.WithLabelValues(rs.route, rs.method, m.codes[status])})
		c = slot.Load()
	}
	c.Inc()
	d := rs.duration.Load()
	if d == nil {
		rs.duration.CompareAndSwap(nil, &observerBox{m.requestDuration.WithLabelValues(rs.route, rs.method)})
		d = rs.duration.Load()
	}
	d.Observe(took.Seconds())
}

// TurnDone counts a chat turn (agent.Observer).
func (m *Metrics) TurnDone(s agent.TurnStats) {
	ch := known(s.Channel, m.turnDuration)
	if m.opts.TenantLabel {
		m.turns.WithLabelValues(ch, s.Outcome, s.Tenant).Inc()
	} else if c, ok := m.turnChildren[ch][s.Outcome]; ok {
		c.Inc()
	}
	if s.Outcome == agent.TurnLimitReached || s.Outcome == agent.TurnBusy || s.Outcome == agent.TurnFailed {
		return // no answer was attempted: no time to tell
	}
	m.turnDuration[ch].Observe(s.Duration.Seconds())
	if s.FirstText > 0 {
		m.firstText[ch].Observe(s.FirstText.Seconds())
	}
}

// ModelCall counts a call to a model (agent.Observer).
func (m *Metrics) ModelCall(s agent.ModelCallStats) {
	p := known(s.Provider, m.modelDuration)
	if c, ok := m.modelCalls[p][s.Outcome]; ok {
		c.Inc()
	}
	m.modelDuration[p].Observe(s.Duration.Seconds())
	if s.InputTokens > 0 {
		m.tokensIn[p].Add(float64(s.InputTokens))
	}
	if s.OutputTokens > 0 {
		m.tokensOut[p].Add(float64(s.OutputTokens))
	}
}

// ToolCall counts a tool the model ran (agent.Observer).
func (m *Metrics) ToolCall(toolType string, success bool) {
	c, ok := m.toolChildren[toolType]
	if !ok {
		c = m.toolChildren[Other]
	}
	if success {
		c[1].Inc()
	} else {
		c[0].Inc()
	}
}

// DeliveryAttempt counts a webhook delivery attempt (jobs.DeliveryObserver).
func (m *Metrics) DeliveryAttempt(outcome string) {
	if c, ok := m.deliveries[outcome]; ok {
		c.Inc()
	}
}

// Refused counts a request a limit refused (one of the Limit* names).
func (m *Metrics) Refused(limit string) {
	if m == nil {
		return
	}
	if c, ok := m.refusals[limit]; ok {
		c.Inc()
	}
}

// ObserveJobs times the jobs River reports on events (a subscription to
// the job_completed, job_failed, job_cancelled and job_snoozed kinds) until
// the channel closes.
func (m *Metrics) ObserveJobs(events <-chan *river.Event) {
	for ev := range events {
		if ev == nil || ev.Job == nil || ev.JobStats == nil {
			continue
		}
		outcome := string(ev.Job.State)
		switch ev.Kind {
		case river.EventKindJobCancelled:
			outcome = "cancelled"
		case river.EventKindJobSnoozed:
			outcome = "snoozed"
		}
		m.jobRuns.WithLabelValues(ev.Job.Kind, ev.Job.Queue, outcome).Observe(ev.JobStats.RunDuration.Seconds())
		m.jobWaits.WithLabelValues(ev.Job.Kind, ev.Job.Queue).Observe(ev.JobStats.QueueWaitDuration.Seconds())
	}
}

// JobEvents are the River events ObserveJobs reads.
var JobEvents = []river.EventKind{river.EventKindJobCompleted, river.EventKindJobFailed,
	river.EventKindJobCancelled, river.EventKindJobSnoozed}

// known is v when it is one of set's keys, else Other.
func known[V any](v string, set map[string]V) string {
	if _, ok := set[v]; ok {
		return v
	}
	return Other
}

// children resolves vec's series for each value of the last label, after
// the fixed first ones, so that counting looks up no labels.
func children(vec *prometheus.CounterVec, values []string, first ...string) map[string]prometheus.Counter {
	out := make(map[string]prometheus.Counter, len(values))
	for _, v := range values {
		out[v] = vec.WithLabelValues(append(slices.Clone(first), v)...)
	}
	return out
}

// factory registers the collectors it makes.
type factory struct{ reg *prometheus.Registry }

func (f factory) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	f.reg.MustRegister(v)
	return v
}

func (f factory) histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	f.reg.MustRegister(v)
	return v
}

// errorLog logs what promhttp reports (a failed collector) through slog.
type errorLog struct{ l *slog.Logger }

func (e errorLog) Println(v ...any) {
	if e.l != nil {
		e.l.Warn("serving metrics", "err", v)
	}
}
