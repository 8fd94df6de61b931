// Package mailtest is an SMTP server for tests: go-smtp speaking the real
// protocol on a loopback port, so that the sender under test (net/smtp)
// really runs, keeping every message it accepts.
package mailtest

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Message is one message the server accepted.
type Message struct {
	From string
	To   []string
	// Data is the message as sent, headers and body, CRLF line ends.
	Data []byte
	// TLS reports whether the message came over TLS (STARTTLS or implicit).
	TLS bool
}

// Options shape the server.
type Options struct {
	// Username and Password, when set, are the one login AUTH PLAIN accepts,
	// and a sender must log in before MAIL FROM.
	Username, Password string
	// TLS, when set, is offered with STARTTLS; with ImplicitTLS the server
	// speaks TLS from the first byte instead.
	TLS         *tls.Config
	ImplicitTLS bool
}

// Server is a running test SMTP server.
type Server struct {
	// Addr is the server's host:port on the loopback.
	Addr string
	opts Options

	mu       sync.Mutex
	messages []Message
	reject   int
	arrived  chan struct{}
}

// Start serves on a loopback port until the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{opts: opts, arrived: make(chan struct{}, 100)}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if opts.ImplicitTLS {
		l = tls.NewListener(l, opts.TLS)
	}
	srv := smtp.NewServer(s)
	srv.Domain = "mail.test"
	srv.AllowInsecureAuth = true
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	if !opts.ImplicitTLS {
		srv.TLSConfig = opts.TLS
	}
	s.Addr = l.Addr().String()
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// URL is a PARLEY_SMTP_URL for the server (smtp://, or smtps:// with
// ImplicitTLS) with the given sender address.
func (s *Server) URL(from string) string {
	u := url.URL{Scheme: "smtp", Host: s.Addr, RawQuery: url.Values{"from": {from}}.Encode()}
	if s.opts.ImplicitTLS {
		u.Scheme = "smtps"
	}
	if s.opts.Username != "" {
		u.User = url.UserPassword(s.opts.Username, s.opts.Password)
	}
	return u.String()
}

// RejectNext makes the server refuse the next n messages at the end of
// DATA with a temporary failure (451), as a busy server does.
func (s *Server) RejectNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reject = n
}

// Messages are the messages accepted so far, in order.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// To are the messages accepted so far for addr (an envelope recipient), in
// order.
func (s *Server) To(addr string) []Message {
	var out []Message
	for _, m := range s.Messages() {
		if slices.Contains(m.To, addr) {
			out = append(out, m)
		}
	}
	return out
}

// Wait returns the n-th message (1-based) accepted for addr, waiting up to
// timeout for it; it fails the test if none comes.
func (s *Server) Wait(t testing.TB, addr string, n int, timeout time.Duration) Message {
	t.Helper()
	deadline := time.After(timeout)
	for {
		if ms := s.To(addr); len(ms) >= n {
			return ms[n-1]
		}
		select {
		case <-s.arrived:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("mailtest: message %d for %s did not arrive within %s (%d arrived)", n, addr, timeout, len(s.To(addr)))
		}
	}
}

// NewSession answers one connection.
func (s *Server) NewSession(c *smtp.Conn) (smtp.Session, error) {
	return &session{srv: s, conn: c}, nil
}

type session struct {
	srv    *Server
	conn   *smtp.Conn
	authed bool
	msg    Message
}

var errAuthRequired = &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, username, password string) error {
		if s.srv.opts.Username == "" || username != s.srv.opts.Username || password != s.srv.opts.Password {
			return errors.New("invalid credentials")
		}
		s.authed = true
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.srv.opts.Username != "" && !s.authed {
		return errAuthRequired
	}
	_, isTLS := s.conn.TLSConnectionState()
	s.msg = Message{From: from, TLS: isTLS}
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.msg.To = append(s.msg.To, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.srv.mu.Lock()
	defer s.srv.mu.Unlock()
	if s.srv.reject > 0 {
		s.srv.reject--
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Try again later"}
	}
	s.msg.Data = data
	s.srv.messages = append(s.srv.messages, s.msg)
	select {
	case s.srv.arrived <- struct{}{}:
	default:
	}
	return nil
}

func (s *session) Reset() { s.msg = Message{} }

func (s *session) Logout() error { return nil }
