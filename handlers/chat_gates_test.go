package handlers

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
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
)

func TestOriginAllowed(t *testing.T) {
	t.Parallel()

	list := []string{"shop.example.com", "example.org", "*.example.net", "local.test:8443"}
	tests := []struct {
		name            string
		allowed         []string
		origin, referer string
		want            bool
	}{
		{"EmptyListAllowsAll", nil, "https://anything.invalid", "", true},
		{"EmptyListAllowsNull", []string{}, "null", "", true},
		{"ExactHost", list, "https://shop.example.com", "", true},
		{"ExactHostOtherSubdomain", list, "https://blog.example.com", "", false},
		{"ExactHostNotItsParent", list, "https://example.com", "", false},
		{"ExactHostWWW", list, "https://www.shop.example.com", "", true},
		{"BareDomain", list, "https://example.org", "", true},
		{"BareDomainWWW", list, "https://www.example.org", "", true},
		{"BareDomainNotOtherSubdomain", list, "https://blog.example.org", "", false},
		{"BareDomainNotLookalike", list, "https://evilexample.org", "", false},
		{"BareDomainNotSuffixTrick", list, "https://example.org.evil.com", "", false},
		{"WildcardSubdomain", list, "https://app.example.net", "", true},
		{"WildcardDeepSubdomain", list, "https://a.b.example.net", "", true},
		{"WildcardNotApex", list, "https://example.net", "", false},
		{"WildcardNotLookalike", list, "https://app.badexample.net", "", false},
		{"CaseInsensitive", list, "HTTPS://Shop.EXAMPLE.com", "", true},
		{"CaseInsensitiveEntry", []string{"Shop.Example.COM"}, "https://shop.example.com", "", true},
		{"TrailingDot", list, "https://shop.example.com.", "", true},
		{"PortIgnoredWithoutEntryPort", list, "http://shop.example.com:3000", "", true},
		{"EntryPortMatches", list, "https://local.test:8443", "", true},
		{"EntryPortDiffers", list, "https://local.test:9000", "", false},
		{"EntryPortDefaultDiffers", list, "https://local.test", "", false},
		{"EntryPortIsSchemeDefault", []string{"example.com:443"}, "https://example.com", "", true},
		{"RefererFallback", list, "", "https://www.example.org/pricing?x=1", true},
		{"RefererFallbackRefused", list, "", "https://evil.com/page", false},
		{"OriginWinsOverReferer", list, "https://evil.com", "https://shop.example.com/", false},
		{"NeitherHeaderAllowed", list, "", "", true},
		{"NullOriginRefused", list, "null", "https://shop.example.com/", false},
		{"MalformedOrigin", list, "shop.example.com", "", false},
		{"MalformedOriginURL", list, "https://%zz", "", false},
		{"MalformedReferer", list, "", "not a url", false},
		{"NonHTTPScheme", list, "chrome-extension://shop.example.com", "", false},
		{"FileReferer", list, "", "file:///home/x/shop.example.com.html", false},
		{"EmptyHost", list, "https://", "", false},
		{"UserInfoRefused", list, "", "https://shop.example.com@evil.com/", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := originAllowed(tt.allowed, tt.origin, tt.referer); got != tt.want {
				t.Errorf("originAllowed(%q, %q, %q) = %v, want %v", tt.allowed, tt.origin, tt.referer, got, tt.want)
			}
		})
	}
}

func TestCheckWidgetKey(t *testing.T) {
	t.Parallel()

	key := "wk_secret"
	withKey := parley.Tenant{Slug: "acme", WidgetKey: &key}
	empty := ""
	tests := []struct {
		name         string
		tenant       parley.Tenant
		header, body string
		wantErr      bool
	}{
		{"NoneSet", parley.Tenant{Slug: "acme"}, "", "", false},
		{"NoneSetIgnoresGivenKey", parley.Tenant{Slug: "acme"}, "whatever", "", false},
		{"EmptyKeyCountsAsNone", parley.Tenant{Slug: "acme", WidgetKey: &empty}, "", "", false},
		{"RightHeader", withKey, key, "", false},
		{"RightBody", withKey, "", key, false},
		{"WrongHeader", withKey, "wk_wrong", "", true},
		{"WrongBody", withKey, "", "wk_wrong", true},
		{"Missing", withKey, "", "", true},
		{"PrefixOnly", withKey, "wk_", "", true},
		{"HeaderBeatsBody", withKey, "wk_wrong", key, true},
		{"HeaderBeatsWrongBody", withKey, key, "wk_wrong", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := checkWidgetKey(tt.tenant, tt.header, tt.body)
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("err = %v, want nil", err)
				}
				return
			}
			var e *parley.Error
			if !errors.As(err, &e) || e.Kind != parley.KindForbidden || e.Message != "Invalid or missing widget key" || e.Code != "" {
				t.Fatalf("err = %#v, want forbidden 'Invalid or missing widget key'", err)
			}
		})
	}
}

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
	box, err := auth.NewBox(auth.RandomBytes(32))
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
		v := &CaptchaVerifier{URL: f.srv.URL}
		if err := checkCaptchaToken(ctx, v, box, logger, tenant, "tok-good", "203.0.113.7"); err != nil {
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

	t.Run("VerifyWithoutRemoteIP", func(t *testing.T) {
		t.Parallel()
		f := newSiteverifyFake(t, 0, `{"success":true}`)
		ok, err := (&CaptchaVerifier{URL: f.srv.URL, Client: f.srv.Client()}).Verify(ctx, "s", "t", "")
		if err != nil || !ok {
			t.Fatalf("Verify = %v, %v; want true, nil", ok, err)
		}
		if _, sent := f.received()[0]["remoteip"]; sent {
			t.Errorf("remoteip sent although unknown")
		}
	})

	t.Run("Failure", func(t *testing.T) {
		t.Parallel()
		f := newSiteverifyFake(t, 0, `{"success":false,"error-codes":["invalid-input-response"]}`)
		v := &CaptchaVerifier{URL: f.srv.URL}
		ok, err := v.Verify(ctx, "s", "tok-bad", "")
		if err != nil || ok {
			t.Fatalf("Verify = %v, %v; want false, nil", ok, err)
		}
		wantCode(t, checkCaptchaToken(ctx, v, box, logger, tenant, "tok-bad", "203.0.113.7"), "CAPTCHA_FAILED")
	})

	t.Run("EndpointError", func(t *testing.T) {
		t.Parallel()
		f := newSiteverifyFake(t, http.StatusInternalServerError, `oops`)
		v := &CaptchaVerifier{URL: f.srv.URL}
		if _, err := v.Verify(ctx, "s", "tok", ""); err == nil {
			t.Fatal("Verify: no error from a 500")
		}
		err := checkCaptchaToken(ctx, v, box, logger, tenant, "tok", "")
		wantCode(t, err, "CAPTCHA_FAILED")
		if e := err.(*parley.Error); e.Message == "Bot challenge failed: solve it again" {
			t.Errorf("message %q does not say verification is unavailable", e.Message)
		}
	})

	t.Run("EndpointGarbage", func(t *testing.T) {
		t.Parallel()
		f := newSiteverifyFake(t, 0, `<html>`)
		wantCode(t, checkCaptchaToken(ctx, &CaptchaVerifier{URL: f.srv.URL}, box, logger, tenant, "tok", ""), "CAPTCHA_FAILED")
	})

	t.Run("EndpointDown", func(t *testing.T) {
		t.Parallel()
		f := newSiteverifyFake(t, 0, `{"success":true}`)
		f.srv.Close()
		v := &CaptchaVerifier{URL: f.srv.URL}
		if _, err := v.Verify(ctx, "s", "tok", ""); err == nil {
			t.Fatal("Verify: no error from a closed server")
		}
		wantCode(t, checkCaptchaToken(ctx, v, box, logger, tenant, "tok", ""), "CAPTCHA_FAILED")
	})

	t.Run("MissingToken", func(t *testing.T) {
		t.Parallel()
		f := newSiteverifyFake(t, 0, `{"success":true}`)
		wantCode(t, checkCaptchaToken(ctx, &CaptchaVerifier{URL: f.srv.URL}, box, logger, tenant, "  ", ""), "CAPTCHA_REQUIRED")
		if n := len(f.received()); n != 0 {
			t.Errorf("siteverify called %d times without a token", n)
		}
	})

	t.Run("TokenTooLong", func(t *testing.T) {
		t.Parallel()
		f := newSiteverifyFake(t, 0, `{"success":true}`)
		tok := fmt.Sprintf("%0*d", maxCaptchaToken+1, 0)
		wantCode(t, checkCaptchaToken(ctx, &CaptchaVerifier{URL: f.srv.URL}, box, logger, tenant, tok, ""), "CAPTCHA_FAILED")
		if n := len(f.received()); n != 0 {
			t.Errorf("siteverify called %d times for an oversized token", n)
		}
	})

	t.Run("GateOff", func(t *testing.T) {
		t.Parallel()
		off := tenant
		off.CaptchaEnabled = false
		if err := checkCaptchaToken(ctx, nil, nil, logger, off, "", ""); err != nil {
			t.Fatalf("err = %v, want nil when the gate is off", err)
		}
	})

	t.Run("SecretMissingOrUnreadable", func(t *testing.T) {
		t.Parallel()
		f := newSiteverifyFake(t, 0, `{"success":true}`)
		v := &CaptchaVerifier{URL: f.srv.URL}
		noSecret := tenant
		noSecret.CaptchaSecretKey = nil
		wantCode(t, checkCaptchaToken(ctx, v, box, logger, noSecret, "tok", ""), "CAPTCHA_FAILED")
		other, err := auth.NewBox(auth.RandomBytes(32))
		if err != nil {
			t.Fatal(err)
		}
		wantCode(t, checkCaptchaToken(ctx, v, other, logger, tenant, "tok", ""), "CAPTCHA_FAILED")
		if n := len(f.received()); n != 0 {
			t.Errorf("siteverify called %d times without a usable secret", n)
		}
	})
}

func TestChatRateLimit(t *testing.T) {
	t.Parallel()

	store := dbtest.New(t)
	ctx := context.Background()
	// 10:00:15 UTC: 45 seconds left in the minute, 3585 in the hour.
	now := time.Date(2026, 3, 4, 10, 0, 15, 0, time.UTC)

	wantLimited := func(t *testing.T, err error, retry int) {
		t.Helper()
		var e *parley.Error
		if !errors.As(err, &e) || e.Kind != parley.KindRateLimited {
			t.Fatalf("err = %#v, want rate limited", err)
		}
		want := fmt.Sprintf("Too many messages: at most 20 a minute and 200 an hour from one address; retry in %d seconds", retry)
		if e.Message != want {
			t.Errorf("message = %q, want %q", e.Message, want)
		}
		if got, ok := retryAfterSeconds(err); !ok || got != retry {
			t.Errorf("retryAfterSeconds = %d, %v; want %d", got, ok, retry)
		}
	}
	send := func(t *testing.T, d *db.DB, ip string, at time.Time, n int) {
		t.Helper()
		for i := range n {
			if err := chatRateLimit(ctx, d, ip, at); err != nil {
				t.Fatalf("message %d: %v", i+1, err)
			}
		}
	}

	t.Run("MinuteLimit", func(t *testing.T) {
		t.Parallel()
		ip := "198.51.100.1"
		send(t, store, ip, now, 20)
		wantLimited(t, chatRateLimit(ctx, store, ip, now), 45)
		// Refused messages count against neither window.
		if n, err := store.Count(ctx, "chat:ip:min:"+ip, time.Minute, now); err != nil || n != 20 {
			t.Errorf("minute count = %d, %v; want 20", n, err)
		}
		if n, err := store.Count(ctx, "chat:ip:hour:"+ip, time.Hour, now); err != nil || n != 20 {
			t.Errorf("hour count = %d, %v; want 20", n, err)
		}
		// Other addresses are not affected; the next minute starts afresh.
		if err := chatRateLimit(ctx, store, "198.51.100.2", now); err != nil {
			t.Errorf("other address: %v", err)
		}
		if err := chatRateLimit(ctx, store, ip, now.Add(time.Minute)); err != nil {
			t.Errorf("next minute: %v", err)
		}
	})

	t.Run("HourLimit", func(t *testing.T) {
		t.Parallel()
		ip := "198.51.100.3"
		// 20 a minute for ten minutes stays under the minute limit.
		for m := range 10 {
			send(t, store, ip, now.Add(time.Duration(m)*time.Minute), 20)
		}
		at := now.Add(10 * time.Minute) // 10:10:15, 2985 seconds left in the hour
		wantLimited(t, chatRateLimit(ctx, store, ip, at), 2985)
		if n, err := store.Count(ctx, "chat:ip:min:"+ip, time.Minute, at); err != nil || n != 0 {
			t.Errorf("minute count after a refusal = %d, %v; want 0", n, err)
		}
		if err := chatRateLimit(ctx, store, ip, now.Add(time.Hour)); err != nil {
			t.Errorf("next hour: %v", err)
		}
	})

	t.Run("SharedAcrossInstances", func(t *testing.T) {
		t.Parallel()
		// A second pool on the same database stands for a second instance.
		other, err := db.Open(ctx, dbtest.URL(), 2)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(other.Close)
		ip := "198.51.100.4"
		send(t, store, ip, now, 10)
		send(t, other, ip, now, 10)
		wantLimited(t, chatRateLimit(ctx, store, ip, now), 45)
		wantLimited(t, chatRateLimit(ctx, other, ip, now), 45)
		if n, err := other.Count(ctx, "chat:ip:min:"+ip, time.Minute, now); err != nil || n != 20 {
			t.Errorf("count seen by the second instance = %d, %v; want 20", n, err)
		}
	})

	t.Run("IPv6CountsPer64", func(t *testing.T) {
		t.Parallel()
		send(t, store, "2001:db8:1:2::1", now, 10)
		send(t, store, "2001:db8:1:2:ffff::9", now, 10)
		wantLimited(t, chatRateLimit(ctx, store, "2001:db8:1:2::abcd", now), 45)
		if err := chatRateLimit(ctx, store, "2001:db8:1:3::1", now); err != nil {
			t.Errorf("another /64: %v", err)
		}
	})

	t.Run("IPv4MappedCountsAsIPv4", func(t *testing.T) {
		t.Parallel()
		send(t, store, "::ffff:198.51.100.5", now, 20)
		wantLimited(t, chatRateLimit(ctx, store, "198.51.100.5", now), 45)
	})
}

func TestRateLimitAddr(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"203.0.113.9":          "203.0.113.9",
		"::ffff:203.0.113.9":   "203.0.113.9",
		"2001:db8:a:b:c:d:e:f": "2001:db8:a:b::/64",
		"fe80::1%eth0":         "fe80::/64",
		"not-an-ip":            "not-an-ip",
	} {
		if got := rateLimitAddr(in); got != want {
			t.Errorf("rateLimitAddr(%q) = %q, want %q", in, got, want)
		}
	}
	if _, ok := retryAfterSeconds(errors.New("other")); ok {
		t.Error("retryAfterSeconds accepted a foreign error")
	}
}
