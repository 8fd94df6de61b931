package web

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// MetricsConfig is where the Prometheus metrics are served (web/metrics):
// on an address of their own (PARLEY_METRICS_ADDR), on the main address
// behind the operator's bearer token (PARLEY_METRICS_TOKEN, or its
// SHA-256 in PARLEY_METRICS_TOKEN_SHA256), or both. Neither: metrics are
// off, nothing is counted, and /metrics answers 404.
type MetricsConfig struct {
	// Addr is the metrics' own listener (such as 127.0.0.1:9090), ""
	// for none.
	Addr string
	// TokenHash is the SHA-256 of the token that /metrics on the main
	// address takes as Authorization: Bearer; nil: /metrics answers 404
	// there.
	TokenHash []byte
	// TenantLabel adds the tenant's slug to the chat turns' counter
	// (PARLEY_METRICS_TENANT_LABEL=1): one more series per tenant.
	TenantLabel bool
}

// On reports whether metrics are collected: they can be read somewhere.
func (m MetricsConfig) On() bool { return m.Addr != "" || len(m.TokenHash) > 0 }

// loadMetrics reads the PARLEY_METRICS_* variables. Errors never repeat
// the token.
func (c *Config) loadMetrics(getenv func(string) string) error {
	m := &c.Metrics
	if m.Addr = strings.TrimSpace(getenv("PARLEY_METRICS_ADDR")); m.Addr != "" {
		if _, _, err := splitHostPort(m.Addr); err != nil {
			return fmt.Errorf("PARLEY_METRICS_ADDR: %v (such as 127.0.0.1:9090)", err)
		}
		if _, port, _ := splitHostPort(m.Addr); port != "0" && m.Addr == c.Addr {
			return fmt.Errorf("PARLEY_METRICS_ADDR: %q is PARLEY_ADDR too; give the metrics an address of their own, or use PARLEY_METRICS_TOKEN to serve them on the main address", m.Addr)
		}
	}
	var err error
	if m.TokenHash, err = tokenHash(getenv, "PARLEY_METRICS_TOKEN"); err != nil {
		return err
	}
	switch v := strings.TrimSpace(getenv("PARLEY_METRICS_TENANT_LABEL")); v {
	case "", "0":
	case "1":
		m.TenantLabel = true
	default:
		return fmt.Errorf("PARLEY_METRICS_TENANT_LABEL: %q is not 1 (the tenant's slug on chat turns) or 0", v)
	}
	if m.TenantLabel && !m.On() {
		return fmt.Errorf("PARLEY_METRICS_TENANT_LABEL: set without PARLEY_METRICS_ADDR or PARLEY_METRICS_TOKEN, which turn metrics on")
	}
	return nil
}

// tokenHash reads a bearer token the server keeps only the SHA-256 of:
// the token in the variable name, or its digest in name_SHA256 (so that
// the server's environment never holds it), not both; neither: nil.
func tokenHash(getenv func(string) string, name string) ([]byte, error) {
	token, digest := strings.TrimSpace(getenv(name)), strings.TrimSpace(getenv(name+"_SHA256"))
	switch {
	case token != "" && digest != "":
		return nil, fmt.Errorf("%s_SHA256: set it or %s, not both", name, name)
	case token != "":
		if len(token) < MinOperatorToken || strings.ContainsAny(token, " \t") {
			return nil, fmt.Errorf("%s: must be at least %d characters without spaces (such as the output of `openssl rand -hex 32`)", name, MinOperatorToken)
		}
		sum := sha256.Sum256([]byte(token))
		return sum[:], nil
	case digest != "":
		sum, err := hex.DecodeString(strings.Fields(digest)[0])
		if err != nil || len(sum) != sha256.Size {
			return nil, fmt.Errorf("%s_SHA256: must be a SHA-256 digest in 64 hex digits (such as the output of `printf %%s \"$TOKEN\" | sha256sum`)", name)
		}
		return sum, nil
	}
	return nil, nil
}
