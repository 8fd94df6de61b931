// Package mail sends email over SMTP with the standard library's net/smtp:
// the dashboard's password-reset links, and whatever else Parley mails. It
// is configured by one URL, PARLEY_SMTP_URL (ParseURL).
package mail

import (
	"errors"
	"fmt"
	"net"
	netmail "net/mail"
	"net/url"
	"strconv"
	"strings"
)

// Config is an SMTP server and the sender's address, parsed from
// PARLEY_SMTP_URL. The password is unexported and String redacts it, so
// that neither a log line nor a JSON dump of a Config shows it.
type Config struct {
	// Host and Port are the server's; Port defaults to 587 (smtp://) or
	// 465 (smtps://).
	Host string
	Port int
	// ImplicitTLS is smtps://: TLS from the first byte. smtp:// upgrades
	// with STARTTLS, required unless Host is a loopback address.
	ImplicitTLS bool
	// Username, with the password, is sent with AUTH PLAIN, only over TLS
	// or to a loopback host; empty means no authentication.
	Username string
	password string
	// From is the sender, the URL's from parameter.
	From netmail.Address
}

// ParseURL reads an SMTP URL:
//
//	smtp://user:password@host:587?from=Parley%20%3Cno-reply%40example.com%3E
//	smtps://user:password@host:465?from=no-reply@example.com
//
// smtp:// sends over STARTTLS, which the server must offer unless host is a
// loopback address (a relay on the same machine, spoken to in plain text);
// smtps:// is TLS from the start. The user and password are optional and
// percent-encoded; from, required, is an address with an optional display
// name. Error messages never repeat the URL, which holds the password.
func ParseURL(raw string) (Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Config{}, errors.New("not a URL (smtp://user:password@host:port?from=address)")
	}
	var c Config
	switch u.Scheme {
	case "smtp":
		c.Port = 587
	case "smtps":
		c.Port, c.ImplicitTLS = 465, true
	default:
		return Config{}, fmt.Errorf("scheme %q is not smtp or smtps", u.Scheme)
	}
	if c.Host = u.Hostname(); c.Host == "" {
		return Config{}, errors.New("no host (smtp://user:password@host:port?from=address)")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Config{}, fmt.Errorf("port %q is not a number between 1 and 65535", p)
		}
		c.Port = n
	}
	if u.Path != "" && u.Path != "/" {
		return Config{}, errors.New("a path has no meaning here: the URL is smtp://user:password@host:port?from=address")
	}
	if u.User != nil {
		c.Username = u.User.Username()
		c.password, _ = u.User.Password()
		if c.Username == "" || c.password == "" {
			return Config{}, errors.New("give both a user and a password, or neither")
		}
	}
	q := u.Query()
	for k := range q {
		if k != "from" {
			return Config{}, fmt.Errorf("unknown parameter %q (the only one is from)", k)
		}
	}
	from := strings.TrimSpace(q.Get("from"))
	if from == "" {
		return Config{}, errors.New("from: required, the sender's address (?from=Parley%20%3Cno-reply%40example.com%3E)")
	}
	a, err := netmail.ParseAddress(from)
	if err != nil {
		return Config{}, fmt.Errorf("from: %q is not an email address", from)
	}
	c.From = *a
	return c, nil
}

// String is the URL with the password redacted.
func (c Config) String() string {
	scheme := "smtp"
	if c.ImplicitTLS {
		scheme = "smtps"
	}
	u := url.URL{Scheme: scheme, Host: c.addr(), RawQuery: url.Values{"from": {c.From.String()}}.Encode()}
	if c.Username != "" {
		u.User = url.UserPassword(c.Username, "xxxxx")
	}
	return u.String()
}

func (c Config) addr() string { return net.JoinHostPort(c.Host, strconv.Itoa(c.Port)) }
