package outbound

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeResolver answers from a map; a missing name does not exist.
type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	ips, ok := f[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]netip.Addr, len(ips))
	for i, s := range ips {
		out[i] = netip.MustParseAddr(s)
	}
	return out, nil
}

// rebindingResolver answers a public address the first time and loopback after.
type rebindingResolver struct{ calls atomic.Int32 }

func (r *rebindingResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	if r.calls.Add(1) == 1 {
		return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
	}
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}

func okServer(t *testing.T) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("ok " + r.Host))
	}))
	t.Cleanup(ts.Close)
	return ts
}

func wantKind(t *testing.T, err error, kind Kind) *Error {
	t.Helper()
	oe := Classify(err, "")
	if oe == nil || oe.Kind != kind {
		t.Fatalf("want kind %d, got %v (%#v)", kind, err, oe)
	}
	return oe
}

func get(o *Guard, timeout time.Duration, url string) error {
	resp, err := o.Client(timeout).Get(url)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

func TestGuardRefuses(t *testing.T) {
	t.Parallel()
	ts := okServer(t) // listening on 127.0.0.1: reachable if the guard let it through
	o := New(nil, fakeResolver{
		"internal.example": {"10.1.2.3"},
		"meta.example":     {"169.254.169.254"},
		"v6.example":       {"fd12::1"},
		"loop.example":     {"127.0.0.1"},
	})
	port := ts.URL[strings.LastIndex(ts.URL, ":"):]
	cases := []struct{ name, url, msg string }{
		{"Loopback", ts.URL, "refused: 127.0.0.1 is a private or reserved address"},
		{"Private10", "http://10.0.0.1/", "refused: 10.0.0.1 is a private or reserved address"},
		{"Private192", "http://192.168.1.1/", ""},
		{"Private172", "http://172.16.5.4/", ""},
		{"CGNAT", "http://100.64.0.1/", ""},
		{"Metadata", "http://169.254.169.254/latest/meta-data/", ""},
		{"Unspecified", "http://0.0.0.0" + port + "/", ""},
		{"IPv6Loopback", "http://[::1]/", ""},
		{"IPv6ULA", "http://[fc00::1]/", ""},
		{"IPv6ULAfd", "http://[fd00:ec2::254]/", ""},
		{"IPv6LinkLocal", "http://[fe80::1]/", ""},
		{"IPv4MappedLoopback", "http://[::ffff:127.0.0.1]" + port + "/", ""},
		{"HostnameToPrivate", "http://internal.example/", "refused: internal.example is not a public internet address"},
		{"HostnameToMetadata", "http://meta.example/", ""},
		{"HostnameToULA", "http://v6.example/", ""},
		{"HostnameToLoopbackServer", "http://loop.example" + port + "/", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			oe := wantKind(t, get(o, 2*time.Second, tc.url), Refused)
			if tc.msg != "" && oe.Error() != tc.msg {
				t.Errorf("message %q, want %q", oe.Error(), tc.msg)
			}
			if err := o.CheckURL(context.Background(), tc.url); Classify(err, "") == nil || Classify(err, "").Kind != Refused {
				t.Errorf("CheckURL: %v", err)
			}
		})
	}
}

func TestGuardAllowList(t *testing.T) {
	t.Parallel()
	ts := okServer(t)
	port := ts.URL[strings.LastIndex(ts.URL, ":"):]
	o := New(append(loopback, netip.MustParsePrefix("fd00::/8")), fakeResolver{
		"app.test":   {"127.0.0.1"},
		"mixed.test": {"10.9.9.9", "127.0.0.1"},
	})

	t.Run("LiteralAddress", func(t *testing.T) {
		t.Parallel()
		if err := get(o, 2*time.Second, ts.URL); err != nil {
			t.Fatal(err)
		}
		if err := o.CheckURL(context.Background(), ts.URL); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("HostnameViaResolver", func(t *testing.T) {
		t.Parallel()
		resp, err := o.Client(2 * time.Second).Get("http://app.test" + port + "/x")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	})
	t.Run("SkipsRefusedAddressOfAName", func(t *testing.T) {
		t.Parallel()
		if err := get(o, 2*time.Second, "http://mixed.test"+port+"/"); err != nil {
			t.Fatal(err)
		}
		// At registration every address must be public.
		wantKind(t, o.CheckURL(context.Background(), "http://mixed.test/"), Refused)
	})
	t.Run("IPv6Prefix", func(t *testing.T) {
		t.Parallel()
		if err := o.CheckURL(context.Background(), "http://[fd00::1]/"); err != nil {
			t.Fatal(err)
		}
		wantKind(t, o.CheckURL(context.Background(), "http://[fc00::1]/"), Refused)
	})
	t.Run("OtherPrivateStillRefused", func(t *testing.T) {
		t.Parallel()
		wantKind(t, get(o, 2*time.Second, "http://127.0.0.2"+port+"/"), Refused)
	})
	t.Run("PooledClientGuarded", func(t *testing.T) {
		t.Parallel()
		c := o.PooledClient(2*time.Second, 100)
		resp, err := c.Get(ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		_, err = c.Get("http://127.0.0.2" + port + "/")
		wantKind(t, err, Refused)
		resp, err = c.Get("http://mixed.test" + port + "/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	})
}

func TestGuardRedirects(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/private", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://10.0.0.1/secret", http.StatusFound)
	})
	mux.HandleFunc("/metadata", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/ftp", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://example.com/file", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/end", http.StatusFound)
	})
	mux.HandleFunc("/end", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("end")) })
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	o := New(loopback, fakeResolver{})

	t.Run("ToPrivateAddress", func(t *testing.T) {
		t.Parallel()
		oe := wantKind(t, get(o, 2*time.Second, ts.URL+"/private"), Refused)
		if oe.Error() != "refused: 10.0.0.1 is a private or reserved address" {
			t.Errorf("message %q", oe.Error())
		}
	})
	t.Run("ToMetadata", func(t *testing.T) {
		t.Parallel()
		wantKind(t, get(o, 2*time.Second, ts.URL+"/metadata"), Refused)
	})
	t.Run("ToOtherScheme", func(t *testing.T) {
		t.Parallel()
		oe := wantKind(t, get(o, 2*time.Second, ts.URL+"/ftp"), Refused)
		if !strings.Contains(oe.Error(), "ftp") {
			t.Errorf("message %q", oe.Error())
		}
	})
	t.Run("TooMany", func(t *testing.T) {
		t.Parallel()
		oe := wantKind(t, get(o, 2*time.Second, ts.URL+"/loop"), Unreachable)
		if !strings.Contains(oe.Error(), "more than 5 redirects") {
			t.Errorf("message %q", oe.Error())
		}
	})
	t.Run("AllowedRedirectFollowed", func(t *testing.T) {
		t.Parallel()
		if err := get(o, 2*time.Second, ts.URL+"/hop"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestGuardDNSRebinding(t *testing.T) {
	t.Parallel()
	ts := okServer(t)
	port := ts.URL[strings.LastIndex(ts.URL, ":"):]
	o := New(nil, &rebindingResolver{})
	if err := o.CheckURL(context.Background(), "http://rebind.example"+port+"/"); err != nil {
		t.Fatalf("first lookup is public: %v", err)
	}
	oe := wantKind(t, get(o, 2*time.Second, "http://rebind.example"+port+"/"), Refused)
	if oe.Error() != "refused: rebind.example is not a public internet address" {
		t.Errorf("message %q", oe.Error())
	}
}

func TestGuardFailures(t *testing.T) {
	t.Parallel()
	o := New(loopback, fakeResolver{})

	t.Run("ConnectionRefused", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		oe := wantKind(t, get(o, 2*time.Second, "http://"+addr+"/"), Unreachable)
		if oe.Error() != "cannot reach 127.0.0.1: connection refused" {
			t.Errorf("message %q", oe.Error())
		}
	})
	t.Run("NoSuchHost", func(t *testing.T) {
		t.Parallel()
		oe := wantKind(t, get(o, 2*time.Second, "http://nowhere.example/"), Unreachable)
		if oe.Error() != "cannot reach nowhere.example: no such host" {
			t.Errorf("message %q", oe.Error())
		}
		wantKind(t, o.CheckURL(context.Background(), "https://nowhere.example/"), Unreachable)
	})
	t.Run("Timeout", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(ts.Close)
		t.Cleanup(func() { close(release) })
		oe := wantKind(t, get(o, 100*time.Millisecond, ts.URL), Timeout)
		if oe.Error() != "timed out waiting for 127.0.0.1" {
			t.Errorf("message %q", oe.Error())
		}
	})
	t.Run("NotHTTP", func(t *testing.T) {
		t.Parallel()
		for _, u := range []string{"ftp://example.com/", "/relative", "http:///nohost", "file:///etc/passwd"} {
			oe := wantKind(t, o.CheckURL(context.Background(), u), Refused)
			if !strings.Contains(oe.Error(), "http") {
				t.Errorf("%s: %q", u, oe.Error())
			}
		}
	})
	t.Run("ErrorsAs", func(t *testing.T) {
		t.Parallel()
		err := get(o, time.Second, "http://10.0.0.1/")
		var oe *Error
		if !errors.As(err, &oe) || oe.Kind != Refused || oe.Host != "10.0.0.1" {
			t.Fatalf("errors.As on the client's error: %v %#v", err, oe)
		}
	})
}
