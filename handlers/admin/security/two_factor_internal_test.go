package security

import (
	"encoding/base64"
	"strings"
	"testing"

	qr "github.com/piglig/go-qr"

	"github.com/parley/parley/auth"
)

// TestQRCode checks the setup page's QR code: an SVG image, of a code that
// reads back as the otpauth:// address.
func TestQRCode(t *testing.T) {
	t.Parallel()
	uri := auth.TOTPURI([]byte("12345678901234567890"), totpIssuer, "owner@example.com")
	data, ok := strings.CutPrefix(qrDataURL(uri), "data:image/svg+xml;base64,")
	if !ok {
		t.Fatalf("not an SVG data: URL: %.40q", qrDataURL(uri))
	}
	svg, err := base64.StdEncoding.DecodeString(data)
	if err != nil || !strings.Contains(string(svg), "<svg") {
		t.Fatalf("not an SVG document (%v): %.80q", err, svg)
	}
	q, err := qr.EncodeText(uri, qr.Medium)
	if err != nil {
		t.Fatal(err)
	}
	img, err := q.ToImage(qrConfig())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := qr.Decode(img); err != nil || got != uri {
		t.Errorf("the code reads %q (%v), want %q", got, err, uri)
	}
}

func TestDevice(t *testing.T) {
	t.Parallel()
	for ua, want := range map[string]string{
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1": "Safari on iPhone",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:120.0) Gecko/20100101 Firefox/120.0":                                                        "Firefox on Windows",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36 Edg/120.0":             "Edge on macOS",
		"Go-http-client/1.1": "Unknown browser",
	} {
		if got := Device(ua); got != want {
			t.Errorf("Device(%q) = %q, want %q", ua, got, want)
		}
	}
}
