package mail

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"mime"
	"mime/quotedprintable"
	"net"
	netmail "net/mail"
	"strings"
	"testing"
	"time"

	"github.com/parley/parley/mail/mailtest"
)

func TestParseURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, raw                  string
		host, user, password, from string
		port                       int
		implicit                   bool
	}{
		{"Submission", "smtp://ada:s%40cret@mail.example.com:2525?from=Parley%20%3Cno-reply%40example.com%3E",
			"mail.example.com", "ada", "s@cret", "no-reply@example.com", 2525, false},
		{"DefaultPort", "smtp://mail.example.com?from=no-reply@example.com", "mail.example.com", "", "", "no-reply@example.com", 587, false},
		{"ImplicitTLS", "smtps://u:p@mail.example.com?from=no-reply@example.com", "mail.example.com", "u", "p", "no-reply@example.com", 465, true},
		{"IPv6", "smtp://[::1]:25/?from=a@b.test", "::1", "", "", "a@b.test", 25, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseURL(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			if c.Host != tc.host || c.Port != tc.port || c.Username != tc.user || c.password != tc.password ||
				c.From.Address != tc.from || c.ImplicitTLS != tc.implicit {
				t.Errorf("got %+v (password %q)", c, c.password)
			}
		})
	}
	t.Run("Redacted", func(t *testing.T) {
		c, err := ParseURL("smtp://ada:topsecret@mail.example.com?from=Parley%20%3Cno-reply%40example.com%3E")
		if err != nil {
			t.Fatal(err)
		}
		if s := c.String(); strings.Contains(s, "topsecret") || !strings.Contains(s, "ada:xxxxx@mail.example.com:587") {
			t.Errorf("String() = %q", s)
		}
	})
	for _, tc := range []struct{ name, raw, want string }{
		{"Scheme", "https://topsecret@mail.example.com?from=a@b.test", "not smtp or smtps"},
		{"NoHost", "smtp://?from=a@b.test", "no host"},
		{"Port", "smtp://u:topsecret@mail.example.com:99999?from=a@b.test", "port"},
		{"NoFrom", "smtp://u:topsecret@mail.example.com", "from: required"},
		{"BadFrom", "smtp://u:topsecret@mail.example.com?from=nobody", "not an email address"},
		{"UserOnly", "smtp://u@mail.example.com?from=a@b.test", "both a user and a password"},
		{"Unknown", "smtp://u:topsecret@mail.example.com?from=a@b.test&tls=off", "unknown parameter"},
		{"Path", "smtp://u:topsecret@mail.example.com/x?from=a@b.test", "path"},
	} {
		t.Run("Refused"+tc.name, func(t *testing.T) {
			_, err := ParseURL(tc.raw)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to say %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "topsecret") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

// testCert is a self-signed certificate for mail.test, and a pool trusting it.
func testCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mail.test"},
		DNSNames: []string{"mail.test"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// remoteSender is a sender to mail.test (not a loopback name, so TLS is
// required) that reaches srv on the loopback and trusts pool.
func remoteSender(t *testing.T, srv *mailtest.Server, pool *x509.CertPool) *Sender {
	t.Helper()
	c, err := ParseURL(strings.Replace(srv.URL("Parley <no-reply@parley.test>"), srv.Addr, "mail.test:"+srv.Addr[strings.LastIndex(srv.Addr, ":")+1:], 1))
	if err != nil {
		t.Fatal(err)
	}
	s := NewSender(c)
	s.rootCAs = pool
	s.dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, srv.Addr)
	}
	return s
}

// readMessage parses a received message with net/mail and decodes its body.
func readMessage(t *testing.T, m mailtest.Message) (*netmail.Message, string) {
	t.Helper()
	msg, err := netmail.ReadMessage(strings.NewReader(string(m.Data)))
	if err != nil {
		t.Fatalf("the message does not parse: %v\n%s", err, m.Data)
	}
	if cte := msg.Header.Get("Content-Transfer-Encoding"); cte != "quoted-printable" {
		t.Fatalf("Content-Transfer-Encoding = %q", cte)
	}
	body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
	if err != nil {
		t.Fatal(err)
	}
	return msg, string(body)
}

func TestSend(t *testing.T) {
	t.Parallel()
	cert, pool := testCert(t)
	serverTLS := &tls.Config{Certificates: []tls.Certificate{cert}}
	msg := Message{To: "Zoë Owner <zoe@example.com>", Subject: "Réinitialisez votre mot de passe ✓",
		Body: "Bonjour,\n\nOpen https://parley.example/admin/reset-password?token=abc_DEF-123 within the hour.\n" + strings.Repeat("long line ", 20) + "\n.\nEnd."}

	t.Run("Message", func(t *testing.T) {
		t.Parallel()
		srv := mailtest.Start(t, mailtest.Options{Username: "ada", Password: "p@ss word"})
		c, err := ParseURL(srv.URL("Parley Support <no-reply@parley.test>"))
		if err != nil {
			t.Fatal(err)
		}
		s := NewSender(c)
		now := time.Date(2026, 11, 25, 9, 30, 0, 0, time.UTC)
		s.Now = func() time.Time { return now }
		if err := s.Send(t.Context(), msg); err != nil {
			t.Fatal(err)
		}
		got := srv.Wait(t, "zoe@example.com", 1, 5*time.Second)
		if got.From != "no-reply@parley.test" || len(got.To) != 1 || got.To[0] != "zoe@example.com" {
			t.Errorf("envelope %s -> %v", got.From, got.To)
		}
		if got.TLS {
			t.Error("TLS to a loopback relay")
		}
		m, body := readMessage(t, got)
		if d, err := m.Header.Date(); err != nil || !d.Equal(now) {
			t.Errorf("Date %v (%v)", d, err)
		}
		if id := m.Header.Get("Message-ID"); !strings.HasPrefix(id, "<") || !strings.HasSuffix(id, "@parley.test>") {
			t.Errorf("Message-ID %q", id)
		}
		if from, err := m.Header.AddressList("From"); err != nil || len(from) != 1 || from[0].Name != "Parley Support" || from[0].Address != "no-reply@parley.test" {
			t.Errorf("From %v (%v)", from, err)
		}
		if to, err := m.Header.AddressList("To"); err != nil || len(to) != 1 || to[0].Name != "Zoë Owner" || to[0].Address != "zoe@example.com" {
			t.Errorf("To %v (%v)", to, err)
		}
		if subj, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject")); err != nil || subj != msg.Subject {
			t.Errorf("Subject %q (%v)", subj, err)
		}
		if ct := m.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" || m.Header.Get("MIME-Version") != "1.0" {
			t.Errorf("Content-Type %q", ct)
		}
		if want := strings.ReplaceAll(msg.Body, "\n", "\r\n") + "\r\n"; body != want {
			t.Errorf("body %q, want %q", body, want)
		}
		for _, line := range strings.Split(string(got.Data), "\r\n") {
			if len(line) > 78 {
				t.Errorf("line of %d characters: %q", len(line), line)
			}
		}
	})

	t.Run("SubjectCannotAddHeaders", func(t *testing.T) {
		t.Parallel()
		srv := mailtest.Start(t, mailtest.Options{})
		c, _ := ParseURL(srv.URL("no-reply@parley.test"))
		if err := NewSender(c).Send(t.Context(), Message{To: "zoe@example.com", Subject: "Hi\r\nBcc: spy@example.com", Body: "x"}); err != nil {
			t.Fatal(err)
		}
		m, _ := readMessage(t, srv.Wait(t, "zoe@example.com", 1, 5*time.Second))
		if bcc := m.Header.Get("Bcc"); bcc != "" {
			t.Errorf("the subject added Bcc: %q", bcc)
		}
	})

	t.Run("STARTTLS", func(t *testing.T) {
		t.Parallel()
		srv := mailtest.Start(t, mailtest.Options{Username: "ada", Password: "secret", TLS: serverTLS})
		if err := remoteSender(t, srv, pool).Send(t.Context(), msg); err != nil {
			t.Fatal(err)
		}
		if got := srv.Wait(t, "zoe@example.com", 1, 5*time.Second); !got.TLS {
			t.Error("the message did not come over TLS")
		}
	})

	t.Run("STARTTLSRequired", func(t *testing.T) {
		t.Parallel()
		srv := mailtest.Start(t, mailtest.Options{Username: "ada", Password: "secret"})
		err := remoteSender(t, srv, pool).Send(t.Context(), msg)
		if err == nil || !strings.Contains(err.Error(), "STARTTLS") {
			t.Fatalf("err = %v, want a refusal without STARTTLS", err)
		}
		if n := len(srv.Messages()); n != 0 {
			t.Errorf("%d messages sent in clear text", n)
		}
	})

	t.Run("UntrustedCertificate", func(t *testing.T) {
		t.Parallel()
		srv := mailtest.Start(t, mailtest.Options{TLS: serverTLS})
		if err := remoteSender(t, srv, nil).Send(t.Context(), msg); err == nil {
			t.Fatal("sent to a server whose certificate no one trusts")
		}
	})

	t.Run("ImplicitTLS", func(t *testing.T) {
		t.Parallel()
		srv := mailtest.Start(t, mailtest.Options{Username: "ada", Password: "secret", TLS: serverTLS, ImplicitTLS: true})
		s := remoteSender(t, srv, pool)
		if !s.cfg.ImplicitTLS {
			t.Fatal("the URL is not smtps://")
		}
		if err := s.Send(t.Context(), msg); err != nil {
			t.Fatal(err)
		}
		if got := srv.Wait(t, "zoe@example.com", 1, 5*time.Second); !got.TLS {
			t.Error("the message did not come over TLS")
		}
	})

	t.Run("WrongPassword", func(t *testing.T) {
		t.Parallel()
		srv := mailtest.Start(t, mailtest.Options{Username: "ada", Password: "secret"})
		c, _ := ParseURL(strings.Replace(srv.URL("no-reply@parley.test"), "secret", "wrong", 1))
		err := NewSender(c).Send(t.Context(), msg)
		if err == nil || !strings.Contains(err.Error(), "authenticating as ada") || strings.Contains(err.Error(), "wrong") {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("Timeout", func(t *testing.T) {
		t.Parallel()
		// A server that accepts and never greets.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				t.Cleanup(func() { c.Close() })
			}
		}()
		c, _ := ParseURL("smtp://" + l.Addr().String() + "?from=no-reply@parley.test")
		s := NewSender(c)
		s.Timeout = 300 * time.Millisecond
		start := time.Now()
		err = s.Send(t.Context(), msg)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want a deadline", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("gave up after %s", d)
		}
	})
}
