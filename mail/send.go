package mail

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	netmail "net/mail"
	"net/netip"
	"net/smtp"
	"os"
	"strings"
	"time"
)

// DefaultTimeout bounds one Send, from the dial to QUIT.
const DefaultTimeout = 20 * time.Second

// Sender sends messages through the SMTP server of its Config.
type Sender struct {
	cfg Config
	// Timeout bounds one Send; 0 means DefaultTimeout.
	Timeout time.Duration
	// Now is the clock of the Date header; nil means time.Now.
	Now func() time.Time

	// dial and rootCAs let the package's tests reach a server on the
	// loopback under another name, with a certificate of their own.
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	rootCAs *x509.CertPool
}

// NewSender returns a sender through cfg's server.
func NewSender(cfg Config) *Sender { return &Sender{cfg: cfg} }

// Message is one plain-text email to one recipient.
type Message struct {
	// To is an address, with or without a display name.
	To      string
	Subject string
	// Body is plain UTF-8 text; it is sent quoted-printable.
	Body string
}

// Send delivers m to the server, which accepts it for delivery or refuses
// it: the error then says at which step. Credentials only ever travel over
// TLS, or to a loopback host.
func (s *Sender) Send(ctx context.Context, m Message) error {
	to, err := netmail.ParseAddress(m.To)
	if err != nil {
		return fmt.Errorf("mail: recipient %q is not an email address", m.To)
	}
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	raw := compose(s.cfg.From, *to, m.Subject, m.Body, now)

	timeout := DefaultTimeout
	if s.Timeout > 0 {
		timeout = s.Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	addr := s.cfg.addr()
	fail := func(step string, err error) error {
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
			err = fmt.Errorf("no answer within %s: %w", timeout, context.DeadlineExceeded)
		case ctx.Err() != nil:
			err = ctx.Err()
		}
		return fmt.Errorf("mail: %s: %s: %w", addr, step, err)
	}
	dial := s.dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	conn, err := dial(ctx, "tcp", addr)
	if err != nil {
		return fail("connecting", err)
	}
	defer conn.Close()
	// net/smtp takes no context: the connection's deadline bounds the whole
	// exchange, and closing the connection ends it when ctx ends sooner.
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(d)
	}
	defer context.AfterFunc(ctx, func() { conn.Close() })()

	if s.cfg.ImplicitTLS {
		tc := tls.Client(conn, s.tlsConfig())
		if err := tc.HandshakeContext(ctx); err != nil {
			return fail("TLS handshake", err)
		}
		conn = tc
	}
	c, err := smtp.NewClient(conn, s.cfg.Host)
	if err != nil {
		return fail("greeting", err)
	}
	defer c.Close()
	if !s.cfg.ImplicitTLS && !loopback(s.cfg.Host) {
		if ok, _ := c.Extension("STARTTLS"); !ok {
			return fail("STARTTLS", errors.New("the server does not offer it, and mail is not sent in clear text beyond this machine (smtps:// if the server speaks TLS from the start)"))
		}
		if err := c.StartTLS(s.tlsConfig()); err != nil {
			return fail("STARTTLS", err)
		}
	}
	if s.cfg.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", s.cfg.Username, s.cfg.password, s.cfg.Host)); err != nil {
			return fail("authenticating as "+s.cfg.Username, err)
		}
	}
	if err := c.Mail(s.cfg.From.Address); err != nil {
		return fail("MAIL FROM", err)
	}
	if err := c.Rcpt(to.Address); err != nil {
		return fail("RCPT TO", err)
	}
	w, err := c.Data()
	if err != nil {
		return fail("DATA", err)
	}
	if _, err := w.Write(raw); err != nil {
		return fail("sending the message", err)
	}
	if err := w.Close(); err != nil {
		return fail("sending the message", err)
	}
	// The server took the message at the end of DATA; a failed QUIT loses nothing.
	_ = c.Quit()
	return nil
}

func (s *Sender) tlsConfig() *tls.Config {
	return &tls.Config{ServerName: s.cfg.Host, RootCAs: s.rootCAs, MinVersion: tls.VersionTLS12}
}

// loopback reports whether host is this machine, where a relay may be
// spoken to without TLS.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// compose builds the RFC 5322 message: the headers a receiving server and
// a mail client expect, and the body as quoted-printable UTF-8 text with
// CRLF line ends.
func compose(from, to netmail.Address, subject, body string, now time.Time) []byte {
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	domain := from.Address[strings.LastIndex(from.Address, "@")+1:]
	var b bytes.Buffer
	header := func(name, value string) { b.WriteString(name + ": " + value + "\r\n") }
	header("Date", now.Format(time.RFC1123Z))
	header("Message-ID", "<"+hex.EncodeToString(id)+"@"+domain+">")
	header("From", from.String())
	header("To", to.String())
	// Q-encoding also turns any CR or LF of the subject into an encoded
	// word, so a subject cannot add headers.
	header("Subject", mime.QEncoding.Encode("utf-8", subject))
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	header("Content-Transfer-Encoding", "quoted-printable")
	b.WriteString("\r\n")
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	qp := quotedprintable.NewWriter(&b)
	_, _ = qp.Write([]byte(body))
	_ = qp.Close()
	return b.Bytes()
}
