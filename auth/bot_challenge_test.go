package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/parley/parley"
)

// siteverifyFake is an httptest stand-in for Turnstile's siteverify.
type siteverifyFake struct {
	srv    *httptest.Server
	mu     sync.Mutex
	forms  []url.Values
	status int    // answer status; 0 means 200
	body   string // answer body
}

func newSiteverifyFake(t *testing.T, status int, body string) *siteverifyFake {
	t.Helper()
	f := &siteverifyFake{status: status, body: body}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.forms = append(f.forms, r.PostForm)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if f.status != 0 {
			w.WriteHeader(f.status)
		}
		fmt.Fprint(w, f.body)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *siteverifyFake) received() []url.Values {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]url.Values(nil), f.forms...)
}

func TestCaptcha(t *testing.T) {
	t.Parallel()

	ctx := context.Background()
	logger := slog.New(slog.DiscardHandler)
	box, err := NewBox(RandomBytes(32))
	if err != nil {
		t.Fatal(err)
	}
	site := "0x4AAA-site"
	tenant := parley.Tenant{Slug: "acme", CaptchaEnabled: true, CaptchaSiteKey: &site,
		CaptchaSecretKey: box.Seal([]byte("0x4AAA-secret"))}

	wantCode := func(t *testing.T, err error, code string) {
		t.Helper()
		var e *parley.Error
		if !errors.As(err, &e) || e.Kind != parley.KindForbidden || e.Code != code || e.Message == "" {
			t.Fatalf("err = %#v, want forbidden with code %s", err, code)
		}
	}

	t.Run("Success", func(t *testing.T) {
		t.Parallel()
		f := newSiteverifyFake(t, 0, `{"success":true,"error-codes":[],"hostname":"shop.example.com"}`)
		v := &BotChallenge{URL: f.srv.URL}
		if err := v.Check(ctx, box, logger, tenant, "tok-good", "203.0.113.7"); err != nil {
			t.Fatalf("err = %v, want nil", err)
		}
		forms := f.received()
		if len(forms) != 1 {
			t.Fatalf("siteverify called %d times, want 1", len(forms))
		}
		got := forms[0]
		if got.Get("secret") != "0x4AAA-secret" || got.Get("response") != "tok-good" || got.Get("remoteip") != "203.0.113.7" {
			t.Errorf("form = %v, want secret, response and remoteip", got)
		}
	})

	t.Run("WithoutRemoteIP", func(t *testing.T) {
		t.Parallel()
		f := newSiteverifyFake(t, 0, `{"success":true}`)
		if err := (&BotChallenge{URL: f.srv.URL, Client: f.srv.Client()}).Check(ctx, box, logger, tenant, "t", ""); err != nil {
			t.Fatalf("err = %v, want nil", err)
		}
		if _, sent := f.received()[0]["remoteip"]; sent {
			t.Errorf("remoteip sent although unknown")
		}
	})

	t.Run("Failure", func(t *testing.T) {
		t.Parallel()
		f := newSiteverifyFake(t, 0, `{"success":false,"error-codes":["invalid-input-response"]}`)
		v := &BotChallenge{URL: f.srv.URL}
		wantCode(t, v.Check(ctx, box, logger, tenant, "tok-bad", "203.0.113.7"), "CAPTCHA_FAILED")
	})

	t.Run("EndpointError", func(t *testing.T) {
		t.Parallel()
		f := newSiteverifyFake(t, http.StatusInternalServerError, `oops`)
		v := &BotChallenge{URL: f.srv.URL}
		err := v.Check(ctx, box, logger, tenant, "tok", "")
		wantCode(t, err, "CAPTCHA_FAILED")
		if e := err.(*parley.Error); e.Message == "Bot challenge failed: solve it again" {
			t.Errorf("message %q does not say verification is unavailable", e.Message)
		}
	})

	t.Run("EndpointGarbage", func(t *testing.T) {
		t.Parallel()
		f := newSiteverifyFake(t, 0, `<html>`)
		wantCode(t, (&BotChallenge{URL: f.srv.URL}).Check(ctx, box, logger, tenant, "tok", ""), "CAPTCHA_FAILED")
	})

	t.Run("EndpointDown", func(t *testing.T) {
		t.Parallel()
		f := newSiteverifyFake(t, 0, `{"success":true}`)
		f.srv.Close()
		v := &BotChallenge{URL: f.srv.URL}
		wantCode(t, v.Check(ctx, box, logger, tenant, "tok", ""), "CAPTCHA_FAILED")
	})

	t.Run("MissingToken", func(t *testing.T) {
		t.Parallel()
		f := newSiteverifyFake(t, 0, `{"success":true}`)
		wantCode(t, (&BotChallenge{URL: f.srv.URL}).Check(ctx, box, logger, tenant, "  ", ""), "CAPTCHA_REQUIRED")
		if n := len(f.received()); n != 0 {
			t.Errorf("siteverify called %d times without a token", n)
		}
	})

	t.Run("TokenTooLong", func(t *testing.T) {
		t.Parallel()
		f := newSiteverifyFake(t, 0, `{"success":true}`)
		tok := fmt.Sprintf("%0*d", maxCaptchaToken+1, 0)
		wantCode(t, (&BotChallenge{URL: f.srv.URL}).Check(ctx, box, logger, tenant, tok, ""), "CAPTCHA_FAILED")
		if n := len(f.received()); n != 0 {
			t.Errorf("siteverify called %d times for an oversized token", n)
		}
	})

	t.Run("GateOff", func(t *testing.T) {
		t.Parallel()
		off := tenant
		off.CaptchaEnabled = false
		if err := (*BotChallenge)(nil).Check(ctx, nil, logger, off, "", ""); err != nil {
			t.Fatalf("err = %v, want nil when the gate is off", err)
		}
	})

	t.Run("SecretMissingOrUnreadable", func(t *testing.T) {
		t.Parallel()
		f := newSiteverifyFake(t, 0, `{"success":true}`)
		v := &BotChallenge{URL: f.srv.URL}
		noSecret := tenant
		noSecret.CaptchaSecretKey = nil
		wantCode(t, v.Check(ctx, box, logger, noSecret, "tok", ""), "CAPTCHA_FAILED")
		other, err := NewBox(RandomBytes(32))
		if err != nil {
			t.Fatal(err)
		}
		wantCode(t, v.Check(ctx, other, logger, tenant, "tok", ""), "CAPTCHA_FAILED")
		if n := len(f.received()); n != 0 {
			t.Errorf("siteverify called %d times without a usable secret", n)
		}
	})
}
