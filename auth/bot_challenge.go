package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/parley/parley"
)

// BotChallenge checks bot-challenge tokens against a siteverify endpoint:
// Cloudflare Turnstile's by default (PARLEY_CAPTCHA_VERIFY_URL), or any
// service speaking the same protocol (form secret, response, remoteip in;
// JSON {success, error-codes} out).
type BotChallenge struct {
	URL string
	// Client makes the call; nil means a plain client with a 5-second
	// timeout. The address is the operator's, not a tenant's, so it needs
	// no SSRF guard.
	Client *http.Client
}

// maxCaptchaToken is Turnstile's documented maximum token length; longer
// tokens are refused without a call.
const maxCaptchaToken = 2048

// siteverifyResponse is the part of a siteverify answer Parley reads.
type siteverifyResponse struct {
	Success    bool     `json:"success"`
	ErrorCodes []string `json:"error-codes"`
}

func (v *BotChallenge) siteverify(ctx context.Context, secret, token, remoteIP string) (siteverifyResponse, error) {
	var out siteverifyResponse
	if v == nil || v.URL == "" {
		return out, errors.New("no siteverify address configured")
	}
	form := url.Values{"secret": {secret}, "response": {token}}
	if remoteIP != "" {
		form.Set("remoteip", remoteIP)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.URL, strings.NewReader(form.Encode()))
	if err != nil {
		return out, fmt.Errorf("building siteverify request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	client := v.Client
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return out, fmt.Errorf("calling siteverify: %w", err)
	}
	defer resp.Body.Close()
	body := io.LimitReader(resp.Body, 64<<10)
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, body)
		return out, fmt.Errorf("siteverify answered %s", resp.Status)
	}
	if err := json.NewDecoder(body).Decode(&out); err != nil {
		return siteverifyResponse{}, fmt.Errorf("reading siteverify answer: %w", err)
	}
	return out, nil
}

// Verify asks the siteverify endpoint whether token solves the challenge
// of the keys whose secret is secret: nil when it does, a *RefusedError
// when it does not (a missing or oversized token is refused without a
// call), another error when no answer could be had.
func (v *BotChallenge) Verify(ctx context.Context, secret, token, remoteIP string) error {
	token = strings.TrimSpace(token)
	if token == "" || len(token) > maxCaptchaToken {
		return &RefusedError{}
	}
	r, err := v.siteverify(ctx, secret, token, remoteIP)
	if err != nil {
		return err
	}
	if !r.Success {
		return &RefusedError{Codes: r.ErrorCodes}
	}
	return nil
}

// RefusedError is a refused token, with siteverify's error codes (none
// when it was not asked), which tell a misconfigured secret
// (invalid-input-secret) from a replayed or expired token: they are for
// the operator, not the visitor.
type RefusedError struct{ Codes []string }

func (e *RefusedError) Error() string {
	return "bot challenge refused: " + strings.Join(e.Codes, ", ")
}

// Check is the bot-challenge gate: nothing to do unless the
// tenant enabled it; then a missing token is CAPTCHA_REQUIRED and a refused
// one CAPTCHA_FAILED. When the token cannot be checked (service down or
// answering garbage, tenant secret missing or unreadable) the gate fails
// closed with CAPTCHA_FAILED and a message saying verification is
// unavailable, never a 5xx: the visitor can retry, and the cause is logged
// for the operator.
func (v *BotChallenge) Check(ctx context.Context, box *Box, logger *slog.Logger, t parley.Tenant, token, remoteIP string) error {
	if !t.CaptchaEnabled {
		return nil
	}
	if strings.TrimSpace(token) == "" {
		return &parley.Error{Kind: parley.KindForbidden, Code: "CAPTCHA_REQUIRED",
			Message: "Bot challenge required: solve the challenge and send its token as captchaToken"}
	}
	failed := &parley.Error{Kind: parley.KindForbidden, Code: "CAPTCHA_FAILED", Message: "Bot challenge failed: solve it again"}
	unavailable := &parley.Error{Kind: parley.KindForbidden, Code: "CAPTCHA_FAILED",
		Message: "Bot challenge could not be verified right now (verification unavailable); try again shortly"}
	if len(t.CaptchaSecretKey) == 0 || box == nil {
		logger.Error("bot-challenge gate is on but the secret key is missing", "tenant", t.Slug)
		return unavailable
	}
	secret, err := box.Open(t.CaptchaSecretKey)
	if err != nil {
		logger.Error("cannot open the bot-challenge secret key", "tenant", t.Slug, "err", err)
		return unavailable
	}
	err = v.Verify(ctx, string(secret), token, remoteIP)
	var refused *RefusedError
	switch {
	case errors.As(err, &refused):
		logger.Info("bot challenge refused", "tenant", t.Slug, "error_codes", refused.Codes)
		return failed
	case err != nil:
		logger.Warn("bot-challenge verification unavailable", "tenant", t.Slug, "err", err)
		return unavailable
	}
	return nil
}
