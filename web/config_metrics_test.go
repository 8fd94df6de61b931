package web

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// TestMetricsConfig checks the PARLEY_METRICS_* variables: off by
// default, the token kept as its SHA-256, and each mistake named.
func TestMetricsConfig(t *testing.T) {
	t.Parallel()
	token := strings.Repeat("m", 40)
	sum := sha256.Sum256([]byte(token))
	c, err := LoadConfig(envOf(nil))
	if err != nil || c.Metrics.On() {
		t.Fatalf("default: %+v, %v; want metrics off", c.Metrics, err)
	}
	for name, env := range map[string]map[string]string{
		"Token":  {"PARLEY_METRICS_TOKEN": token},
		"Digest": {"PARLEY_METRICS_TOKEN_SHA256": hex.EncodeToString(sum[:]) + "  -"},
	} {
		c, err := LoadConfig(envOf(env))
		if err != nil || string(c.Metrics.TokenHash) != string(sum[:]) || !c.Metrics.On() {
			t.Errorf("%s: %x, %v", name, c.Metrics.TokenHash, err)
		}
	}
	c, err = LoadConfig(envOf(map[string]string{"PARLEY_METRICS_ADDR": "127.0.0.1:9090", "PARLEY_METRICS_TENANT_LABEL": "1"}))
	if err != nil || c.Metrics.Addr != "127.0.0.1:9090" || !c.Metrics.TenantLabel || c.Metrics.TokenHash != nil {
		t.Errorf("own address: %+v, %v", c.Metrics, err)
	}
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"PARLEY_METRICS_TOKEN": "short"}, "PARLEY_METRICS_TOKEN: must be at least 32"},
		{map[string]string{"PARLEY_METRICS_TOKEN": token, "PARLEY_METRICS_TOKEN_SHA256": hex.EncodeToString(sum[:])}, "not both"},
		{map[string]string{"PARLEY_METRICS_TOKEN_SHA256": "abc"}, "PARLEY_METRICS_TOKEN_SHA256: must be a SHA-256 digest"},
		{map[string]string{"PARLEY_METRICS_ADDR": "9090"}, "PARLEY_METRICS_ADDR:"},
		{map[string]string{"PARLEY_METRICS_ADDR": ":8080"}, "is PARLEY_ADDR too"},
		{map[string]string{"PARLEY_METRICS_TENANT_LABEL": "yes", "PARLEY_METRICS_ADDR": ":9090"}, "PARLEY_METRICS_TENANT_LABEL: \"yes\""},
		{map[string]string{"PARLEY_METRICS_TENANT_LABEL": "1"}, "without PARLEY_METRICS_ADDR or PARLEY_METRICS_TOKEN"},
	} {
		_, err := LoadConfig(envOf(tc.env))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error with %q", tc.env, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), token) {
			t.Errorf("%v: the error repeats the token", tc.env)
		}
	}
}
