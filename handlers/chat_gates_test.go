package handlers

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/parley/parley"
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
