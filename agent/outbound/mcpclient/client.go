// Package mcpclient is the client of the tenants' own MCP servers: their
// tools listed (cached per tenant) and called over Streamable HTTP with the
// official SDK, through the SSRF-guarded client. The engine offers the
// tools to the model (agent.MCPOffers) and runs them through Client.Call.
package mcpclient

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound"
)

// The tenant's own MCP server (MCP_PROXY): its tools are listed over
// Streamable HTTP with the official SDK, cached per tenant in the process,
// offered to the model as mcp_<name> by agent's enrichMCP step, and called with
// tools/call. Every request goes through the SSRF-guarded client, within
// Client.Timeout, with the tenant's key as a bearer token when one is set.

const (
	// ToolsTTL is how long a tenant's tool list is kept.
	ToolsTTL = 5 * time.Minute
	// FailureTTL is how long a failed discovery is kept: the turns of
	// that interval are answered without the server's tools at once, so a
	// server that is down costs at most one bounded wait per interval.
	FailureTTL = 30 * time.Second
	// DefaultTimeout bounds one discovery or one tool call, connection
	// and handshake included.
	DefaultTimeout = 10 * time.Second
	// maxMCPDescription and maxMCPSchema bound what one tool adds to the
	// model's request; a tool whose schema is larger is not offered.
	maxMCPDescription = 1000
	maxMCPSchema      = 16 << 10
	// maxMCPResult bounds the text of a tool's answer given to the model.
	maxMCPResult = 8000
	// maxMCPListPages bounds the pages of a paginated tools/list.
	maxMCPListPages = 10
)

// Tool is one tool of a tenant's MCP server, as its tools/list gives it.
type Tool struct {
	// Name is the server's name of the tool, which tools/call takes.
	Name        string
	Description string
	// InputSchema is the JSON Schema of its arguments, always an object
	// schema.
	InputSchema json.RawMessage
}

// Failure is a tool call that did not succeed: Summary is what the model
// is told (and the tool history keeps), Result what it is given besides,
// Cause the underlying error for the logs. The engine hands it to the model
// as its own tools.Failure (agent/tools).
type Failure struct {
	Summary string
	Result  map[string]any
	Cause   error
}

func (f *Failure) Error() string { return f.Summary }

// Secrets opens values sealed at rest (the tenant's MCP key); auth.Box
// satisfies it.
type Secrets interface {
	Open(sealed []byte) ([]byte, error)
}

// Client lists and calls the tools of tenants' own MCP servers, keeping
// each tenant's list for ToolsTTL. One serves every tenant; the cache is
// the process's own (ARCHITECTURE.md says why that is safe).
type Client struct {
	// Outbound makes the requests; Secrets opens the tenant's sealed key.
	Outbound *outbound.Guard
	Secrets  Secrets
	// Timeout bounds one discovery or one call; 0 means DefaultTimeout.
	Timeout time.Duration
	// Now is the clock of the cache; nil means time.Now.
	Now func() time.Time

	mu    sync.Mutex
	cache map[string]*mcpDiscovery // by tenant id
}

// mcpDiscovery is one tools/list of a tenant's server, under way or done,
// for the settings it was made with.
type mcpDiscovery struct {
	url       string
	sealedKey []byte
	done      chan struct{} // closed once tools and err are set
	tools     []Tool
	err       error
	expires   time.Time // set when done, under Client.mu
}

// wait returns the discovery's answer once it is done, or ctx's error
// should ctx end first.
func (d *mcpDiscovery) wait(ctx context.Context) ([]Tool, error) {
	select {
	case <-d.done:
		return d.tools, d.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Configured reports whether the tenant's plan includes MCP tools and the
// tenant saved a server.
func Configured(t parley.Tenant) bool {
	return t.PlanInfo().MCP && t.MCPToolsURL != nil && *t.MCPToolsURL != ""
}

func (p *Client) timeout() time.Duration {
	if p.Timeout > 0 {
		return p.Timeout
	}
	return DefaultTimeout
}

func (p *Client) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Tools returns the tenant's server's tools: the cached list when it was
// made with the tenant's current URL and key and has not expired, else a new
// tools/list. Turns of one tenant that miss together share one discovery.
// The discovery is not tied to ctx (a visitor leaving does not fail it for
// the others), but the wait for it is.
func (p *Client) Tools(ctx context.Context, t parley.Tenant) ([]Tool, error) {
	if !Configured(t) {
		return nil, nil
	}
	url, key := *t.MCPToolsURL, t.MCPToolsAPIKey
	p.mu.Lock()
	d := p.cache[t.ID]
	if d == nil || d.url != url || !bytes.Equal(d.sealedKey, key) || p.expired(d) {
		d = p.start(t.ID, url, key)
	}
	p.mu.Unlock()
	return d.wait(ctx)
}

// Refresh lists the tenant's server's tools now, whatever is cached, and
// keeps the answer for the next turns: the dashboard's Discover button.
func (p *Client) Refresh(ctx context.Context, t parley.Tenant) ([]Tool, error) {
	if !Configured(t) {
		return nil, nil
	}
	p.mu.Lock()
	d := p.start(t.ID, *t.MCPToolsURL, t.MCPToolsAPIKey)
	p.mu.Unlock()
	return d.wait(ctx)
}

// Forget drops the tenant's cached list: its settings changed. The turns of
// other instances see the change as well, since a list is only used with
// the URL and key it was made with.
func (p *Client) Forget(tenantID string) {
	p.mu.Lock()
	delete(p.cache, tenantID)
	p.mu.Unlock()
}

// expired reports whether a finished discovery is past its time; p.mu is held.
func (p *Client) expired(d *mcpDiscovery) bool {
	return !d.expires.IsZero() && !p.now().Before(d.expires)
}

// start begins a discovery for the tenant and caches it; p.mu is held. The
// expired entries of other tenants go at the same time.
func (p *Client) start(tenantID, url string, sealedKey []byte) *mcpDiscovery {
	if p.cache == nil {
		p.cache = map[string]*mcpDiscovery{}
	}
	for id, old := range p.cache {
		if p.expired(old) {
			delete(p.cache, id)
		}
	}
	d := &mcpDiscovery{url: url, sealedKey: sealedKey, done: make(chan struct{})}
	p.cache[tenantID] = d
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), p.timeout())
		defer cancel()
		tools, err := p.list(ctx, url, sealedKey)
		p.mu.Lock()
		d.tools, d.err = tools, err
		ttl := ToolsTTL
		if err != nil {
			ttl = FailureTTL
		}
		d.expires = p.now().Add(ttl)
		p.mu.Unlock()
		close(d.done)
	}()
	return d
}

// list runs tools/list against the server, every page of it.
func (p *Client) list(ctx context.Context, url string, sealedKey []byte) ([]Tool, error) {
	session, err := p.connect(ctx, url, sealedKey)
	if err != nil {
		return nil, err
	}
	defer closeSession(session)
	var tools []Tool
	params := &mcp.ListToolsParams{}
	for range maxMCPListPages {
		res, err := session.ListTools(ctx, params)
		if err != nil {
			return nil, p.describe(ctx, url, err)
		}
		for _, t := range res.Tools {
			if t == nil || t.Name == "" {
				continue
			}
			schema, err := objectSchema(t.InputSchema)
			if err != nil {
				continue
			}
			desc := cmp.Or(t.Description, t.Title)
			tools = append(tools, Tool{Name: t.Name, Description: parley.Clip(desc, maxMCPDescription), InputSchema: schema})
		}
		if res.NextCursor == "" {
			break
		}
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
	return tools, nil
}

// Call runs one tool of the tenant's server with the model's arguments. A
// failure is a *Failure whose summary the model can relay.
func (p *Client) Call(ctx context.Context, t parley.Tenant, name string, args json.RawMessage) (map[string]any, error) {
	var arguments map[string]any
	if err := json.Unmarshal(args, &arguments); err != nil || arguments == nil {
		return nil, &Failure{Summary: "The arguments were not a valid JSON object; call the tool again with the parameters its schema describes."}
	}
	if !Configured(t) {
		return nil, &Failure{Summary: "The business's tool server is no longer configured."}
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout())
	defer cancel()
	url := *t.MCPToolsURL
	session, err := p.connect(ctx, url, t.MCPToolsAPIKey)
	if err != nil {
		return nil, p.failure(err)
	}
	defer closeSession(session)
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: arguments})
	if err != nil {
		return nil, p.failure(p.describe(ctx, url, err))
	}
	text := resultText(res.Content)
	if res.IsError {
		msg := "The tool answered with an error"
		if text != "" {
			msg += ": " + parley.Clip(text, 500)
		}
		return nil, &Failure{Summary: msg + ".", Result: map[string]any{"isError": true, "content": text}}
	}
	out := map[string]any{"content": text}
	if res.StructuredContent != nil {
		out["structuredContent"] = res.StructuredContent
	}
	return out, nil
}

// failure is the model's words for a server that could not answer, with the
// cause for the logs.
func (p *Client) failure(err error) *Failure {
	summary := "The business's tool server could not be reached; the tool could not be used. Tell the visitor and offer another way."
	if errors.Is(err, errMCPTimeout) {
		summary = fmt.Sprintf("The business's tool server did not answer within %s; the tool could not be used. Tell the visitor and offer another way.", p.timeout())
	}
	return &Failure{Summary: summary, Cause: err, Result: map[string]any{"error": err.Error()}}
}

var errMCPTimeout = errors.New("timed out")

// connect opens a session with the server: the MCP handshake, over the
// guarded client, with the bearer key when one is set. The key goes in the
// Authorization header only: never in an error, a log or the tool history.
func (p *Client) connect(ctx context.Context, url string, sealedKey []byte) (*mcp.ClientSession, error) {
	if p.Outbound == nil {
		return nil, errors.New("no outbound client")
	}
	client := p.Outbound.Client(p.timeout())
	if len(sealedKey) > 0 {
		if p.Secrets == nil {
			return nil, errors.New("the API key cannot be opened")
		}
		key, err := p.Secrets.Open(sealedKey)
		if err != nil {
			return nil, errors.New("the API key cannot be opened")
		}
		client.Transport = bearer{key: "Bearer " + string(key), base: client.Transport}
	}
	transport := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: client, MaxRetries: -1, DisableStandaloneSSE: true}
	c := mcp.NewClient(&mcp.Implementation{Name: "parley", Version: "1"}, nil)
	session, err := c.Connect(ctx, transport, nil)
	if err != nil {
		return nil, p.describe(ctx, url, err)
	}
	return session, nil
}

// closeSession ends a session without waiting: the SDK's DELETE of a
// stateful session may take up to 5 seconds more from a server that is
// slow, which the turn must not wait for.
func closeSession(s *mcp.ClientSession) {
	go func() { _ = s.Close() }()
}

// describe turns an SDK error into plain words naming no address the guard
// refused.
func (p *Client) describe(ctx context.Context, rawURL string, err error) error {
	host := rawURL
	if u, perr := url.Parse(rawURL); perr == nil {
		host = u.Hostname()
	}
	var oe *outbound.Error
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || outbound.IsTimeout(err):
		return fmt.Errorf("%w: no answer from %s within %s", errMCPTimeout, host, p.timeout())
	case errors.As(err, &oe):
		return oe
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return outbound.Classify(err, host)
	}
	return fmt.Errorf("the server at %s answered: %s", host, parley.Clip(err.Error(), 300))
}

// bearer adds the Authorization header to every request of a client.
type bearer struct {
	key  string
	base http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", b.key)
	base := b.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}

// objectSchema is a tool's input schema as the model is given it: a JSON
// object schema of at most maxMCPSchema bytes; no schema at all means no
// arguments.
func objectSchema(s any) (json.RawMessage, error) {
	if s == nil {
		return json.RawMessage(`{"type":"object","properties":{}}`), nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := json.Unmarshal(b, &obj); err != nil || obj == nil {
		return nil, errors.New("the input schema is not an object")
	}
	if typ, ok := obj["type"]; ok && typ != "object" {
		return nil, errors.New("the input schema is not an object schema")
	}
	if _, ok := obj["type"]; !ok {
		obj["type"] = "object"
		b, _ = json.Marshal(obj)
	}
	if len(b) > maxMCPSchema {
		return nil, errors.New("the input schema is too large")
	}
	return b, nil
}

// resultText joins the text of a tool's answer; other content is named.
func resultText(content []mcp.Content) string {
	var parts []string
	for _, c := range content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, "[an image]")
		case *mcp.AudioContent:
			parts = append(parts, "[an audio clip]")
		case *mcp.ResourceLink:
			parts = append(parts, "[a link: "+c.URI+"]")
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			}
		}
	}
	return parley.Clip(strings.Join(parts, "\n"), maxMCPResult)
}
