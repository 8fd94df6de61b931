// Package idempotent honours the Idempotency-Key of the management API's
// creates (README, "Retrying requests"): Keep is a middleware over the
// REST API's routes which, for a POST of a route in Routes carrying the
// header, claims the key for the request's tenant and credential
// (db/idempotency), runs the request, and keeps its answer under the key
// for 24 hours (its body sealed with the secret box); the same request
// sent again with the key gets that answer again, with
// Idempotency-Replayed: true, and nothing runs twice. The same key with
// another request (method, path and body) is refused with 422, one whose
// first request still runs with 409, a malformed key with 400. An answer
// of 500 or more, or a 429, is not kept: the key is given back and a
// retry runs again. The chat's key is its own (handlers/public, agent:
// kept with the message).
package idempotent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/idempotency"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
)

// Routes are the routes whose POST honours an Idempotency-Key: every create
// of the management API (those answering 201, the bulk upserts, the CSV
// import, a URL's sync, and the managed voice setup, which buys a
// number). The OpenAPI document names the header on exactly these
// operations (web's TestIdempotencyKeyRoutes).
var Routes = map[string]bool{
	"/tenants/:slug/segments":                                         true,
	"/tenants/:slug/corpus":                                           true,
	"/tenants/:slug/corpus/bulk":                                      true,
	"/tenants/:slug/corpus/import":                                    true,
	"/tenants/:slug/corpus/sync":                                      true,
	"/tenants/:slug/synonyms":                                         true,
	"/tenants/:slug/tests":                                            true,
	"/tenants/:slug/tools":                                            true,
	"/tenants/:slug/products":                                         true,
	"/tenants/:slug/products/bulk":                                    true,
	"/tenants/:slug/visitors":                                         true,
	"/tenants/:slug/webhooks":                                         true,
	"/tenants/:slug/conversations/:id/messages":                       true,
	"/tenants/:slug/conversations/:id/messages/:messageId/correction": true,
	"/tenants/:slug/voice/setup":                                      true,
}

// maxBody bounds the body read to fingerprint a request: above every
// create's own limit (the bulk upserts' 12 MiB), so that no request a
// route takes is refused here.
const maxBody = 16 << 20

// replayedHeaders are the headers kept with an answer and replayed.
var replayedHeaders = []string{echo.HeaderContentType, echo.HeaderLocation, "ETag", "Content-Language"}

// settleTimeout bounds keeping an answer or giving a key back, which runs
// even when the client has gone.
const settleTimeout = 5 * time.Second

// Keeper keeps the answers of the creates sent with an Idempotency-Key.
type Keeper struct{ *handlers.Base }

// New builds the keeper over the Base web builds.
func New(b *handlers.Base) *Keeper { return &Keeper{b} }

// Keep is the middleware that honours the Idempotency-Key of the creates
// (Routes) under the REST API's authentication (the tenant and the
// credential set).
func (k *Keeper) Keep(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.Method != http.MethodPost || !Routes[c.Path()] {
			return next(c)
		}
		key, err := handlers.IdempotencyKey(req.Header)
		if err != nil {
			return err
		}
		t, ok := handlers.TenantOf(c)
		p, ok2 := handlers.PrincipalOf(c)
		if key == "" || !ok || !ok2 || k.Box == nil {
			return next(c)
		}
		fp, _, err := fingerprint(req, maxBody)
		if err != nil {
			return err
		}
		return k.keep(c, next, idempotency.Request{TenantID: t.ID, Scope: Scope(p.TokenID, p.ClientID), Key: key, Fingerprint: fp})
	}
}

// KeepForm honours the Idempotency-Key of POST /form/{slug}, the public
// form's submission, as Keep does the REST API's creates. The form takes
// no credential: its keys are the tenant's within the visitor's session
// (the body's sessionId), or, without one, within the client's address.
// A tenant that does not exist is left to the handler's 404.
func (k *Keeper) KeepForm(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		key, err := handlers.IdempotencyKey(req.Header)
		if err != nil {
			return err
		}
		if key == "" || k.Box == nil {
			return next(c)
		}
		t, err := k.DB.TenantBySlug(req.Context(), c.Param("slug"))
		if parley.ErrorKind(err) == parley.KindNotFound {
			return next(c)
		} else if err != nil {
			return err
		}
		fp, body, err := fingerprint(req, jsonbody.MaxJSONBody) // a form's body is small; the handler's own limit is this
		if err != nil {
			return err
		}
		var visitor struct {
			SessionID string `json:"sessionId"`
		}
		scope := "form:address:" + c.RealIP()
		if json.Unmarshal(body, &visitor) == nil && visitor.SessionID != "" {
			scope = "form:session:" + visitor.SessionID
		}
		return k.keep(c, next, idempotency.Request{TenantID: t.ID, Scope: scope, Key: key, Fingerprint: fp})
	}
}

// keep claims r's key (its Now set here) and replays the answer kept under
// it, refuses the request (another request's key, or one still running),
// or runs it and keeps its answer.
func (k *Keeper) keep(c echo.Context, next echo.HandlerFunc, r idempotency.Request) error {
	r.Now = k.Clock().Truncate(time.Microsecond)
	outcome, a, err := k.DB.ClaimIdempotencyKey(c.Request().Context(), r)
	if err != nil {
		return err
	}
	switch outcome {
	case idempotency.Replay:
		if a.Body, err = k.Box.Open(a.Body); err != nil {
			return fmt.Errorf("opening a kept answer: %w", err)
		}
		return replay(c, a)
	case idempotency.Reused:
		return handlers.ErrIdempotencyKeyReused
	case idempotency.InUse:
		return handlers.ErrIdempotencyKeyInUse
	}
	return k.run(c, next, r)
}

// run runs the request that claimed r's key, writing its answer (an
// error's too) through a copy kept under the key, or gives the key back
// when the answer is not to be replayed.
func (k *Keeper) run(c echo.Context, next echo.HandlerFunc, r idempotency.Request) error {
	res := c.Response()
	rec := &recorder{ResponseWriter: res.Writer}
	res.Writer = rec
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request().Context()), settleTimeout)
	defer cancel()
	settled := false
	defer func() {
		if !settled { // a panic: the recovery answers 500
			k.release(ctx, c, r)
		}
	}()
	err := next(c)
	if err != nil {
		c.Error(err) // write it now, so that it is what is kept
	}
	res.Writer = rec.ResponseWriter
	settled = true
	if status := res.Status; !res.Committed || status >= 500 || status == http.StatusTooManyRequests {
		k.release(ctx, c, r)
		return err
	}
	// A create's answer may hold a secret shown once (a webhook's): kept sealed.
	a := idempotency.Answer{Status: res.Status, Headers: map[string]string{}, Body: k.Box.Seal(rec.body.Bytes())}
	for _, h := range replayedHeaders {
		if v := res.Header().Get(h); v != "" {
			a.Headers[h] = v
		}
	}
	if kerr := k.DB.KeepIdempotentAnswer(ctx, r, a); kerr != nil {
		k.Log(c).Error("keeping an idempotent answer", "err", kerr)
	}
	return err
}

// release gives r's key back, logging a failure (the key is then claimed
// afresh after idempotency.Abandoned).
func (k *Keeper) release(ctx context.Context, c echo.Context, r idempotency.Request) {
	if err := k.DB.ReleaseIdempotencyKey(ctx, r); err != nil {
		k.Log(c).Error("releasing an idempotency key", "err", err)
	}
}

// replay answers with a kept answer.
func replay(c echo.Context, a idempotency.Answer) error {
	h := c.Response().Header()
	for name, v := range a.Headers {
		h.Set(name, v)
	}
	h.Set(handlers.IdempotencyReplayedHeader, "true")
	c.Response().WriteHeader(a.Status)
	_, err := c.Response().Write(a.Body)
	return err
}

// Scope is a credential's scope of keys: an API token's own, or an OAuth
// client's (its access tokens alike, so that a retry after a refresh finds
// its key).
func Scope(tokenID, clientID string) string {
	if clientID != "" {
		return "oauth:" + clientID
	}
	return "token:" + tokenID
}

// fingerprint is the SHA-256 of the request's method, path, query and
// body, which it reads (up to limit bytes), returns and puts back for the
// handler. A
// multipart body (the CSV import) is fingerprinted by its parts' names,
// file names and contents, not its boundary, which a client draws anew
// for each try.
func fingerprint(req *http.Request, limit int64) (sum [32]byte, body []byte, err error) {
	if body, err = io.ReadAll(io.LimitReader(req.Body, limit+1)); err != nil {
		return sum, nil, err
	}
	if int64(len(body)) > limit {
		return sum, nil, &parley.Error{Kind: parley.KindTooLarge, Message: "Request body too large"}
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	h := sha256.New()
	io.WriteString(h, req.Method+"\n"+req.URL.Path+"\n"+req.URL.RawQuery+"\n")
	if !multipartParts(h, req.Header.Get(echo.HeaderContentType), body) {
		h.Write(body)
	}
	h.Sum(sum[:0])
	return sum, body, nil
}

// multipartParts writes a multipart body's parts to w, reporting whether
// the body was one; a malformed one is written as it is by the caller.
func multipartParts(w io.Writer, ctype string, body []byte) bool {
	mt, params, err := mime.ParseMediaType(ctype)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return false
	}
	var parts bytes.Buffer
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return false
		}
		content, err := io.ReadAll(p)
		if err != nil {
			return false
		}
		parts.WriteString(p.FormName() + "\x00" + p.FileName() + "\x00")
		sum := sha256.Sum256(content)
		parts.Write(sum[:])
	}
	_, _ = w.Write(parts.Bytes())
	return true
}

// recorder is the response writer of a keyed request: what it writes goes
// to the client and into body.
type recorder struct {
	http.ResponseWriter
	body bytes.Buffer
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

// Unwrap is the writer under the copy, for http.ResponseController.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
