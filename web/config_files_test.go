package web

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every secret of FileVars may come from NAME_FILE: read at start, its
// trailing newlines trimmed, to the same effect as NAME.
func TestConfigSecretFiles(t *testing.T) {
	t.Parallel()
	key, prev := strings.Repeat("1f", 32), strings.Repeat("2e", 32)
	token := strings.Repeat("t", 40)
	tokenSum := sha256.Sum256([]byte(token))
	cases := map[string]struct {
		value string
		extra map[string]string
		check func(Config) bool
	}{
		"DATABASE_URL": {"postgres://parley:pw@db:5432/parley", nil,
			func(c Config) bool { return c.DatabaseURL == "postgres://parley:pw@db:5432/parley" }},
		"PARLEY_SECRET_KEY": {key, nil, func(c Config) bool { return hex.EncodeToString(c.SecretKey) == key }},
		"PARLEY_SECRET_KEY_PREVIOUS": {prev, map[string]string{"PARLEY_SECRET_KEY": key},
			func(c Config) bool { return hex.EncodeToString(c.SecretKeyPrevious) == prev }},
		"PARLEY_LLM_API_KEY": {"sk-from-file", nil, func(c Config) bool { return c.LLMAPIKey == "sk-from-file" }},
		"PARLEY_ADMIN_CAPTCHA_SECRET_KEY": {"captcha-secret", map[string]string{"PARLEY_ADMIN_CAPTCHA_SITE_KEY": "site"},
			func(c Config) bool { return c.AdminCaptchaSecretKey == "captcha-secret" }},
		"PARLEY_OPERATOR_TOKEN": {token, nil, func(c Config) bool { return string(c.OperatorTokenHash) == string(tokenSum[:]) }},
		"PARLEY_OPERATOR_TOKEN_SHA256": {hex.EncodeToString(tokenSum[:]), nil,
			func(c Config) bool { return string(c.OperatorTokenHash) == string(tokenSum[:]) }},
		"PARLEY_METRICS_TOKEN": {token, nil, func(c Config) bool { return string(c.Metrics.TokenHash) == string(tokenSum[:]) }},
		"PARLEY_METRICS_TOKEN_SHA256": {hex.EncodeToString(tokenSum[:]), nil,
			func(c Config) bool { return string(c.Metrics.TokenHash) == string(tokenSum[:]) }},
		"PARLEY_SMTP_URL": {"smtps://u:p@mail.example.com:465?from=a%40example.com", nil,
			func(c Config) bool { return c.SMTP != nil && c.SMTP.Host == "mail.example.com" }},
		"PARLEY_VAPI_API_KEY": {"vapi-key", nil, func(c Config) bool { return c.VapiAPIKey == "vapi-key" }},
		"PARLEY_EMBEDDINGS_API_KEY": {"emb-key", map[string]string{"PARLEY_EMBEDDINGS_URL": "https://api.example.com/v1",
			"PARLEY_EMBEDDINGS_MODEL": "m"}, func(c Config) bool { return c.EmbeddingsAPIKey == "emb-key" }},
	}
	for _, name := range FileVars {
		if _, ok := cases[name]; !ok {
			t.Errorf("%s_FILE has no case here", name)
		}
	}
	dir := t.TempDir()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for i, ending := range []string{"", "\n", "\r\n", "\n\n"} {
				file := filepath.Join(dir, name+string(rune('a'+i)))
				if err := os.WriteFile(file, []byte(tc.value+ending), 0o600); err != nil {
					t.Fatal(err)
				}
				env := map[string]string{name + "_FILE": file}
				if name == "DATABASE_URL" {
					env["DATABASE_URL"] = ""
				}
				for k, v := range tc.extra {
					env[k] = v
				}
				c, err := LoadConfig(envOf(env))
				if err != nil {
					t.Fatalf("ending %q: %v", ending, err)
				}
				if !tc.check(c) {
					t.Errorf("ending %q: the value read from the file was not taken", ending)
				}
			}
		})
	}
}

func TestConfigSecretFileErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	secret := strings.Repeat("3d", 32)
	if err := os.WriteFile(keyFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"PARLEY_SECRET_KEY": secret, "PARLEY_SECRET_KEY_FILE": keyFile},
			"PARLEY_SECRET_KEY_FILE: set it or PARLEY_SECRET_KEY, not both"},
		{map[string]string{"DATABASE_URL_FILE": keyFile}, "DATABASE_URL_FILE: set it or DATABASE_URL, not both"},
		{map[string]string{"PARLEY_SECRET_KEY_FILE": filepath.Join(dir, "missing")},
			"PARLEY_SECRET_KEY_FILE: cannot read " + filepath.Join(dir, "missing") + ": no such file or directory"},
		{map[string]string{"PARLEY_LLM_API_KEY_FILE": empty}, "PARLEY_LLM_API_KEY_FILE: " + empty + " is empty"},
		{map[string]string{"PARLEY_ADDR_FILE": keyFile}, "PARLEY_ADDR_FILE: unknown variable"},
		{map[string]string{"PARLEY_SECRET_KEY_PREVIOUS_FILE": keyFile}, "PARLEY_SECRET_KEY_PREVIOUS: set without PARLEY_SECRET_KEY"},
		{map[string]string{"PARLEY_SECRET_KEY": secret, "PARLEY_SECRET_KEY_PREVIOUS_FILE": keyFile},
			"PARLEY_SECRET_KEY_PREVIOUS: the same key as PARLEY_SECRET_KEY"},
		{map[string]string{"PARLEY_SECRET_KEY": secret, "PARLEY_SECRET_KEY_PREVIOUS": "nothex"},
			"PARLEY_SECRET_KEY_PREVIOUS: must be 32 bytes"},
	} {
		_, err := LoadConfig(envOf(tc.env))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.env, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%v: the error %q repeats the secret", tc.env, err)
		}
	}
}
