package public

import (
	"testing"
	"time"
)

// refusedOrigin normalizes the refused page to scheme://host[:port] and
// records nothing it cannot check.
func TestRefusedOrigin(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ origin, referer, want string }{
		{"https://Shop.Example.COM.", "", "https://shop.example.com"},
		{"HTTPS://shop.example.com:443", "", "https://shop.example.com"},
		{"http://shop.example.com:80", "", "http://shop.example.com"},
		{"http://127.0.0.1:5173", "", "http://127.0.0.1:5173"},
		{"https://[::1]:8443", "", "https://[::1]:8443"},
		{"", "https://blog.example.org/posts/1?q=%0Afake%20log#x", "https://blog.example.org"},
		{"https://a.example", "https://b.example/page", "https://a.example"},
		{"null", "", ""},
		{"file:///etc/passwd", "", ""},
		{"https://user:pw@shop.example.com", "", ""},
		{"https://shop.example.com:99999", "", ""},
		{"", "", ""},
	} {
		got, ok := refusedOrigin(c.origin, c.referer)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("refusedOrigin(%q, %q) = %q, %v; want %q", c.origin, c.referer, got, ok, c.want)
		}
	}
}

// The throttle writes an origin at most once per RefusalEvery with the
// refusals counted in between, and bounds a tenant's writes per window.
func TestRefusalThrottle(t *testing.T) {
	t.Parallel()
	var r refusalThrottle
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	if n := r.take("t1", "https://a.example", now); n != 1 {
		t.Fatalf("first refusal: %d to write, want 1", n)
	}
	for i := range 4 {
		if n := r.take("t1", "https://a.example", now.Add(time.Duration(i+1)*time.Second)); n != 0 {
			t.Fatalf("refusal %d within the window: %d to write, want 0", i+2, n)
		}
	}
	if n := r.take("t2", "https://a.example", now); n != 1 {
		t.Errorf("another tenant's refusal of the same origin: %d, want 1", n)
	}
	if n := r.take("t1", "https://a.example", now.Add(RefusalEvery)); n != 5 {
		t.Errorf("after the window: %d to write, want the 4 waiting and this one", n)
	}
	// Forged origins: at most refusalWrites of a tenant per window.
	later := now.Add(10 * RefusalEvery)
	writes := 0
	for i := range 100 {
		if r.take("t3", "https://x"+string(rune('a'+i%26))+string(rune('a'+i/26))+".example", later) > 0 {
			writes++
		}
	}
	if writes != refusalWrites {
		t.Errorf("100 forged origins wrote %d times in one window, want %d", writes, refusalWrites)
	}
}
