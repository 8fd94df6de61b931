package public

import (
	"errors"
	"testing"

	"github.com/parley/parley"
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
