package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/crypto/bcrypt"
)

// envOf turns a map into LoadConfig's two inputs; DATABASE_URL is set unless the map says otherwise.
func envOf(m map[string]string) (func(string) string, []string) {
	env := map[string]string{"DATABASE_URL": "postgres://u@127.0.0.1:5432/parley"}
	for k, v := range m {
		env[k] = v
	}
	var environ []string
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	return func(k string) string { return env[k] }, environ
}

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	c, err := LoadConfig(envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		DatabaseURL:        "postgres://u@127.0.0.1:5432/parley",
		Addr:               ":8080",
		BaseURL:            "http://localhost:8080",
		CDNURL:             "http://localhost:8080",
		LLMProvider:        "local",
		CaptchaVerifyURL:   "https://challenges.cloudflare.com/turnstile/v0/siteverify",
		CaptchaScriptURL:   "https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit",
		DBMaxConns:         DefaultDBMaxConns(runtime.GOMAXPROCS(0)),
		LogFormat:          "json",
		StripeAPIURL:       "https://api.stripe.com",
		BodyTimeout:        60 * time.Second,
		MaxConnsPerAddress: 256,
		PasswordCost:       bcrypt.DefaultCost, // production's; tests lower it in testConfig
		VapiBaseURL:        "https://api.vapi.ai",
		Signup:             "closed",
		DrainDelay:         5 * time.Second,
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", c, want)
	}
	if c.SecureCookies() {
		t.Error("SecureCookies over http")
	}
}

func TestConfigValues(t *testing.T) {
	t.Parallel()
	key := strings.Repeat("0f", 32)
	cases := []struct {
		name  string
		env   map[string]string
		check func(t *testing.T, c Config)
	}{
		{"port of PARLEY_ADDR makes the base URL", map[string]string{"PARLEY_ADDR": "0.0.0.0:9090"}, func(t *testing.T, c Config) {
			if c.Addr != "0.0.0.0:9090" || c.BaseURL != "http://localhost:9090" || c.CDNURL != c.BaseURL {
				t.Errorf("%+v", c)
			}
		}},
		{"https base URL, trailing slash dropped, secure cookies", map[string]string{"PARLEY_BASE_URL": "https://parley.example.com/"}, func(t *testing.T, c Config) {
			if c.BaseURL != "https://parley.example.com" || c.CDNURL != "https://parley.example.com" || !c.SecureCookies() {
				t.Errorf("%+v secure=%v", c, c.SecureCookies())
			}
		}},
		{"CDN URL of its own", map[string]string{"PARLEY_CDN_URL": "https://cdn.example.com/"}, func(t *testing.T, c Config) {
			if c.CDNURL != "https://cdn.example.com" || c.BaseURL != "http://localhost:8080" {
				t.Errorf("%+v", c)
			}
		}},
		{"secret key", map[string]string{"PARLEY_SECRET_KEY": " " + key + "\n"}, func(t *testing.T, c Config) {
			if len(c.SecretKey) != 32 || c.SecretKey[0] != 0x0f {
				t.Errorf("SecretKey = %x", c.SecretKey)
			}
		}},
		{"LLM settings", map[string]string{"PARLEY_LLM_PROVIDER": "openai", "PARLEY_LLM_BASE_URL": "http://127.0.0.1:11434/v1/",
			"PARLEY_LLM_API_KEY": "sk-x", "PARLEY_LLM_MODEL": "m"}, func(t *testing.T, c Config) {
			if c.LLMProvider != "openai" || c.LLMBaseURL != "http://127.0.0.1:11434/v1" || c.LLMAPIKey != "sk-x" || c.LLMModel != "m" {
				t.Errorf("%+v", c)
			}
		}},
		{"anthropic", map[string]string{"PARLEY_LLM_PROVIDER": "anthropic", "PARLEY_LLM_MODEL": "claude-x"}, func(t *testing.T, c Config) {
			if c.LLMProvider != "anthropic" {
				t.Errorf("%+v", c)
			}
		}},
		{"CIDR lists", map[string]string{"PARLEY_SSRF_ALLOW": " 10.0.0.0/8, 192.168.1.7 ,::1,fd00::/8,,", "PARLEY_TRUSTED_PROXIES": "127.0.0.1/32,10.1.2.3/16"}, func(t *testing.T, c Config) {
			wantSSRF := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32"),
				netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("fd00::/8")}
			if !reflect.DeepEqual(c.SSRFAllow, wantSSRF) {
				t.Errorf("SSRFAllow = %v", c.SSRFAllow)
			}
			// masked to the network
			wantProxies := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.1.0.0/16")}
			if !reflect.DeepEqual(c.TrustedProxies, wantProxies) {
				t.Errorf("TrustedProxies = %v", c.TrustedProxies)
			}
		}},
		{"empty CIDR lists", map[string]string{"PARLEY_SSRF_ALLOW": "", "PARLEY_TRUSTED_PROXIES": " , "}, func(t *testing.T, c Config) {
			if len(c.SSRFAllow) != 0 || len(c.TrustedProxies) != 0 {
				t.Errorf("%v %v", c.SSRFAllow, c.TrustedProxies)
			}
		}},
		{"DB max conns bounds", map[string]string{"PARLEY_DB_MAX_CONNS": "1000"}, func(t *testing.T, c Config) {
			if c.DBMaxConns != 1000 {
				t.Errorf("DBMaxConns = %d", c.DBMaxConns)
			}
		}},
		{"drain delay", map[string]string{"PARLEY_DRAIN_DELAY": " 5m "}, func(t *testing.T, c Config) {
			if c.DrainDelay != 5*time.Minute {
				t.Errorf("DrainDelay = %v", c.DrainDelay)
			}
		}},
		{"no drain", map[string]string{"PARLEY_DRAIN_DELAY": "0"}, func(t *testing.T, c Config) {
			if c.DrainDelay != 0 {
				t.Errorf("DrainDelay = %v", c.DrainDelay)
			}
		}},
		{"body timeout", map[string]string{"PARLEY_BODY_TIMEOUT": " 90s "}, func(t *testing.T, c Config) {
			if c.BodyTimeout != 90*time.Second {
				t.Errorf("BodyTimeout = %v", c.BodyTimeout)
			}
		}},
		{"no connection cap", map[string]string{"PARLEY_MAX_CONNS_PER_ADDRESS": "0"}, func(t *testing.T, c Config) {
			if c.MaxConnsPerAddress != 0 {
				t.Errorf("MaxConnsPerAddress = %d", c.MaxConnsPerAddress)
			}
		}},
		{"DB max conns 1", map[string]string{"PARLEY_DB_MAX_CONNS": " 1 "}, func(t *testing.T, c Config) {
			if c.DBMaxConns != 1 {
				t.Errorf("DBMaxConns = %d", c.DBMaxConns)
			}
		}},
		{"Stripe API URL of the operator's choice", map[string]string{"PARLEY_STRIPE_API_URL": "http://127.0.0.1:12111/"}, func(t *testing.T, c Config) {
			if c.StripeAPIURL != "http://127.0.0.1:12111" {
				t.Errorf("StripeAPIURL = %q", c.StripeAPIURL)
			}
		}},
		{"captcha provider of the operator's choice", map[string]string{"PARLEY_CAPTCHA_VERIFY_URL": "https://captcha.example/siteverify",
			"PARLEY_CAPTCHA_SCRIPT_URL": " https://captcha.example/api.js?render=explicit "}, func(t *testing.T, c Config) {
			if c.CaptchaVerifyURL != "https://captcha.example/siteverify" || c.CaptchaScriptURL != "https://captcha.example/api.js?render=explicit" {
				t.Errorf("%+v", c)
			}
		}},
		{"sign-in challenge keys", map[string]string{"PARLEY_ADMIN_CAPTCHA_SITE_KEY": " 0x4AAA-site ", "PARLEY_ADMIN_CAPTCHA_SECRET_KEY": "0x4AAA-secret"}, func(t *testing.T, c Config) {
			if c.AdminCaptchaSiteKey != "0x4AAA-site" || c.AdminCaptchaSecretKey != "0x4AAA-secret" {
				t.Errorf("%+v", c)
			}
		}},
		{"text logs", map[string]string{"PARLEY_LOG_FORMAT": "text"}, func(t *testing.T, c Config) {
			if c.LogFormat != "text" {
				t.Errorf("LogFormat = %q", c.LogFormat)
			}
		}},
		{"PARLEY_TEST_ variables are not typos", map[string]string{"PARLEY_TEST_DATABASE_URL": "x", "PARLEY_TEST_ANYTHING": "y"}, func(t *testing.T, c Config) {
			if c.Addr != ":8080" {
				t.Errorf("%+v", c)
			}
		}},
		{"SMTP server", map[string]string{"PARLEY_SMTP_URL": " smtps://ada:s3cret@mail.example.com?from=Parley%20%3Cno-reply%40example.com%3E "}, func(t *testing.T, c Config) {
			if c.SMTP == nil || c.SMTP.Host != "mail.example.com" || c.SMTP.Port != 465 || !c.SMTP.ImplicitTLS || c.SMTP.From.Address != "no-reply@example.com" {
				t.Errorf("SMTP = %v", c.SMTP)
			}
			js, _ := json.Marshal(c)
			if s := fmt.Sprintf("%v %+v %v %s", c, c, *c.SMTP, js); strings.Contains(s, "s3cret") {
				t.Errorf("the configuration prints the SMTP password: %s", s)
			}
		}},
		{"invite sign-up without mail", map[string]string{"PARLEY_SIGNUP": " invite "}, func(t *testing.T, c Config) {
			if c.Signup != "invite" {
				t.Errorf("Signup = %q", c.Signup)
			}
		}},
		{"open sign-up with mail", map[string]string{"PARLEY_SIGNUP": "open", "PARLEY_SMTP_URL": "smtp://localhost:25?from=no-reply%40example.com"}, func(t *testing.T, c Config) {
			if c.Signup != "open" {
				t.Errorf("Signup = %q", c.Signup)
			}
		}},
		{"the operator's Vapi account", map[string]string{"PARLEY_VAPI_API_KEY": " vapi-key ", "PARLEY_VAPI_BASE_URL": "http://127.0.0.1:9/"}, func(t *testing.T, c Config) {
			if c.VapiAPIKey != "vapi-key" || c.VapiBaseURL != "http://127.0.0.1:9" {
				t.Errorf("%+v", c)
			}
		}},
		{"the operator's token, kept as its digest", map[string]string{"PARLEY_OPERATOR_TOKEN": " " + strings.Repeat("k", 32) + " "}, func(t *testing.T, c Config) {
			sum := sha256.Sum256([]byte(strings.Repeat("k", 32)))
			if !bytes.Equal(c.OperatorTokenHash, sum[:]) {
				t.Errorf("OperatorTokenHash = %x", c.OperatorTokenHash)
			}
			js, _ := json.Marshal(c)
			if s := fmt.Sprintf("%v %+v %s", c, c, js); strings.Contains(s, strings.Repeat("k", 32)) {
				t.Errorf("the configuration holds the operator's token: %s", s)
			}
		}},
		{"the operator's token's digest", map[string]string{"PARLEY_OPERATOR_TOKEN_SHA256": strings.Repeat("Ab", 32) + "  -"}, func(t *testing.T, c Config) {
			if hex.EncodeToString(c.OperatorTokenHash) != strings.Repeat("ab", 32) {
				t.Errorf("OperatorTokenHash = %x", c.OperatorTokenHash)
			}
		}},
		{"no operator token: the operator API is off", nil, func(t *testing.T, c Config) {
			if c.OperatorTokenHash != nil {
				t.Errorf("OperatorTokenHash = %x", c.OperatorTokenHash)
			}
		}},
		{"blank values take the default", map[string]string{"PARLEY_ADDR": "  ", "PARLEY_LLM_PROVIDER": " ", "PARLEY_LOG_FORMAT": ""}, func(t *testing.T, c Config) {
			if c.Addr != ":8080" || c.LLMProvider != "local" || c.LogFormat != "json" {
				t.Errorf("%+v", c)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := LoadConfig(envOf(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		env  map[string]string
		want string // the variable the message must start with
	}{
		{"missing DATABASE_URL", map[string]string{"DATABASE_URL": ""}, "DATABASE_URL"},
		{"openai without a model", map[string]string{"PARLEY_LLM_PROVIDER": "openai"}, "PARLEY_LLM_MODEL"},
		{"anthropic without a model", map[string]string{"PARLEY_LLM_PROVIDER": "anthropic"}, "PARLEY_LLM_MODEL"},
		{"blank DATABASE_URL", map[string]string{"DATABASE_URL": "   "}, "DATABASE_URL"},
		{"sign-in challenge without its secret", map[string]string{"PARLEY_ADMIN_CAPTCHA_SITE_KEY": "0x4AAA-site"}, "PARLEY_ADMIN_CAPTCHA_SECRET_KEY"},
		{"sign-in challenge without its site key", map[string]string{"PARLEY_ADMIN_CAPTCHA_SECRET_KEY": "s"}, "PARLEY_ADMIN_CAPTCHA_SITE_KEY"},
		{"PARLEY_ADDR without port", map[string]string{"PARLEY_ADDR": "nope"}, "PARLEY_ADDR"},
		{"PARLEY_ADDR bad port", map[string]string{"PARLEY_ADDR": "localhost:http"}, "PARLEY_ADDR"},
		{"PARLEY_ADDR port out of range", map[string]string{"PARLEY_ADDR": ":70000"}, "PARLEY_ADDR"},
		{"PARLEY_VAPI_BASE_URL not a URL", map[string]string{"PARLEY_VAPI_BASE_URL": "api.vapi.ai"}, "PARLEY_VAPI_BASE_URL"},
		{"PARLEY_BASE_URL ftp", map[string]string{"PARLEY_BASE_URL": "ftp://x"}, "PARLEY_BASE_URL"},
		{"PARLEY_BASE_URL without host", map[string]string{"PARLEY_BASE_URL": "https://"}, "PARLEY_BASE_URL"},
		{"PARLEY_BASE_URL relative", map[string]string{"PARLEY_BASE_URL": "parley.example.com"}, "PARLEY_BASE_URL"},
		{"PARLEY_CDN_URL", map[string]string{"PARLEY_CDN_URL": "//cdn.example.com"}, "PARLEY_CDN_URL"},
		{"PARLEY_LLM_BASE_URL", map[string]string{"PARLEY_LLM_BASE_URL": "localhost:11434"}, "PARLEY_LLM_BASE_URL"},
		{"PARLEY_CAPTCHA_VERIFY_URL", map[string]string{"PARLEY_CAPTCHA_VERIFY_URL": "file:///etc/passwd"}, "PARLEY_CAPTCHA_VERIFY_URL"},
		{"PARLEY_STRIPE_API_URL", map[string]string{"PARLEY_STRIPE_API_URL": "api.stripe.com"}, "PARLEY_STRIPE_API_URL"},
		{"PARLEY_CAPTCHA_SCRIPT_URL", map[string]string{"PARLEY_CAPTCHA_SCRIPT_URL": "javascript:alert(1)"}, "PARLEY_CAPTCHA_SCRIPT_URL"},
		{"PARLEY_CAPTCHA_SCRIPT_URL relative", map[string]string{"PARLEY_CAPTCHA_SCRIPT_URL": "/turnstile.js"}, "PARLEY_CAPTCHA_SCRIPT_URL"},
		{"PARLEY_SECRET_KEY short", map[string]string{"PARLEY_SECRET_KEY": "abcd"}, "PARLEY_SECRET_KEY"},
		{"PARLEY_SECRET_KEY 62 hex", map[string]string{"PARLEY_SECRET_KEY": strings.Repeat("a", 62)}, "PARLEY_SECRET_KEY"},
		{"PARLEY_SECRET_KEY 66 hex", map[string]string{"PARLEY_SECRET_KEY": strings.Repeat("a", 66)}, "PARLEY_SECRET_KEY"},
		{"PARLEY_SECRET_KEY non-hex", map[string]string{"PARLEY_SECRET_KEY": strings.Repeat("zz", 32)}, "PARLEY_SECRET_KEY"},
		{"PARLEY_SECRET_KEY blank", map[string]string{"PARLEY_SECRET_KEY": "   "}, "PARLEY_SECRET_KEY"},
		{"PARLEY_LLM_PROVIDER", map[string]string{"PARLEY_LLM_PROVIDER": "foo"}, "PARLEY_LLM_PROVIDER"},
		{"PARLEY_LLM_PROVIDER case", map[string]string{"PARLEY_LLM_PROVIDER": "OpenAI"}, "PARLEY_LLM_PROVIDER"},
		{"PARLEY_SSRF_ALLOW /33", map[string]string{"PARLEY_SSRF_ALLOW": "10.0.0.0/33"}, "PARLEY_SSRF_ALLOW"},
		{"PARLEY_SSRF_ALLOW second entry", map[string]string{"PARLEY_SSRF_ALLOW": "10.0.0.0/8,nope"}, "PARLEY_SSRF_ALLOW"},
		{"PARLEY_TRUSTED_PROXIES", map[string]string{"PARLEY_TRUSTED_PROXIES": "x"}, "PARLEY_TRUSTED_PROXIES"},
		{"PARLEY_TRUSTED_PROXIES bad CIDR", map[string]string{"PARLEY_TRUSTED_PROXIES": "127.0.0.1/x"}, "PARLEY_TRUSTED_PROXIES"},
		{"PARLEY_DB_MAX_CONNS 0", map[string]string{"PARLEY_DB_MAX_CONNS": "0"}, "PARLEY_DB_MAX_CONNS"},
		{"PARLEY_DB_MAX_CONNS negative", map[string]string{"PARLEY_DB_MAX_CONNS": "-5"}, "PARLEY_DB_MAX_CONNS"},
		{"PARLEY_DB_MAX_CONNS 1001", map[string]string{"PARLEY_DB_MAX_CONNS": "1001"}, "PARLEY_DB_MAX_CONNS"},
		{"PARLEY_DB_MAX_CONNS word", map[string]string{"PARLEY_DB_MAX_CONNS": "many"}, "PARLEY_DB_MAX_CONNS"},
		{"PARLEY_MAX_CONNS_PER_ADDRESS negative", map[string]string{"PARLEY_MAX_CONNS_PER_ADDRESS": "-1"}, "PARLEY_MAX_CONNS_PER_ADDRESS"},
		{"PARLEY_BODY_TIMEOUT word", map[string]string{"PARLEY_BODY_TIMEOUT": "long"}, "PARLEY_BODY_TIMEOUT"},
		{"PARLEY_DRAIN_DELAY word", map[string]string{"PARLEY_DRAIN_DELAY": "soon"}, "PARLEY_DRAIN_DELAY"},
		{"PARLEY_DRAIN_DELAY negative", map[string]string{"PARLEY_DRAIN_DELAY": "-1s"}, "PARLEY_DRAIN_DELAY"},
		{"PARLEY_DRAIN_DELAY over 5m", map[string]string{"PARLEY_DRAIN_DELAY": "5m1s"}, "PARLEY_DRAIN_DELAY"},
		{"PARLEY_BODY_TIMEOUT zero", map[string]string{"PARLEY_BODY_TIMEOUT": "0s"}, "PARLEY_BODY_TIMEOUT"},
		{"PARLEY_LOG_FORMAT", map[string]string{"PARLEY_LOG_FORMAT": "xml"}, "PARLEY_LOG_FORMAT"},
		{"PARLEY_SMTP_URL scheme", map[string]string{"PARLEY_SMTP_URL": "mailto:no-reply@example.com"}, "PARLEY_SMTP_URL"},
		{"PARLEY_SMTP_URL without from", map[string]string{"PARLEY_SMTP_URL": "smtp://u:p@mail.example.com:587"}, "PARLEY_SMTP_URL"},
		{"PARLEY_SIGNUP unknown", map[string]string{"PARLEY_SIGNUP": "public"}, "PARLEY_SIGNUP"},
		{"PARLEY_SIGNUP case", map[string]string{"PARLEY_SIGNUP": "Open", "PARLEY_SMTP_URL": "smtp://localhost:25?from=no-reply%40example.com"}, "PARLEY_SIGNUP"},
		{"PARLEY_SIGNUP open without mail", map[string]string{"PARLEY_SIGNUP": "open"}, "PARLEY_SIGNUP"},
		{"PARLEY_OPERATOR_TOKEN short", map[string]string{"PARLEY_OPERATOR_TOKEN": strings.Repeat("k", 31)}, "PARLEY_OPERATOR_TOKEN"},
		{"PARLEY_OPERATOR_TOKEN with a space", map[string]string{"PARLEY_OPERATOR_TOKEN": strings.Repeat("k", 20) + " " + strings.Repeat("k", 20)}, "PARLEY_OPERATOR_TOKEN"},
		{"PARLEY_OPERATOR_TOKEN_SHA256 short", map[string]string{"PARLEY_OPERATOR_TOKEN_SHA256": strings.Repeat("ab", 31)}, "PARLEY_OPERATOR_TOKEN_SHA256"},
		{"PARLEY_OPERATOR_TOKEN_SHA256 not hex", map[string]string{"PARLEY_OPERATOR_TOKEN_SHA256": strings.Repeat("zz", 32)}, "PARLEY_OPERATOR_TOKEN_SHA256"},
		{"both operator credentials", map[string]string{"PARLEY_OPERATOR_TOKEN": strings.Repeat("k", 32), "PARLEY_OPERATOR_TOKEN_SHA256": strings.Repeat("ab", 32)}, "PARLEY_OPERATOR_TOKEN_SHA256"},
		{"unknown PARLEY_ variable", map[string]string{"PARLEY_TYPO": "1"}, "PARLEY_TYPO"},
		{"misspelt known variable", map[string]string{"PARLEY_BASEURL": "https://x"}, "PARLEY_BASEURL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := LoadConfig(envOf(tc.env))
			if err == nil {
				t.Fatalf("LoadConfig accepted %v", tc.env)
			}
			if !strings.HasPrefix(err.Error(), tc.want+":") {
				t.Errorf("error %q does not start with %s:", err, tc.want)
			}
		})
	}
	t.Run("an unknown variable is caught even when empty", func(t *testing.T) {
		t.Parallel()
		getenv, environ := envOf(nil)
		_, err := LoadConfig(getenv, append(environ, "PARLEY_SECRETKEY="))
		if err == nil || !strings.HasPrefix(err.Error(), "PARLEY_SECRETKEY:") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("the scripts' own variables are not typos", func(t *testing.T) {
		t.Parallel()
		getenv, environ := envOf(nil)
		for _, kv := range []string{"PARLEY_DEV_PG_PORT=5440", "PARLEY_TEST_PG_PORT=5441", "PARLEY_BENCH_FLOOR=1", "PARLEY_LOAD_URL=http://x"} {
			if _, err := LoadConfig(getenv, append(environ, kv)); err != nil {
				t.Errorf("%s: %v", kv, err)
			}
		}
		// a near miss of one is still caught
		if _, err := LoadConfig(getenv, append(environ, "PARLEY_DEV_PG_PROT=5440")); err == nil {
			t.Error("PARLEY_DEV_PG_PROT accepted")
		}
	})
	t.Run("variables not starting with PARLEY_ are not checked", func(t *testing.T) {
		t.Parallel()
		getenv, environ := envOf(nil)
		if _, err := LoadConfig(getenv, append(environ, "PARLEYX=1", "MY_PARLEY_TYPO=1", "HOME=/root")); err != nil {
			t.Error(err)
		}
	})
}

// realIP is the client address the server believes for a request from remote carrying xff.
func realIP(extract echo.IPExtractor, remote, xff string) string {
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.RemoteAddr = remote
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	return extract(req)
}

func TestConfigTrustedProxies(t *testing.T) {
	t.Parallel()
	load := func(t *testing.T, proxies string) echo.IPExtractor {
		t.Helper()
		c, err := LoadConfig(envOf(map[string]string{"PARLEY_TRUSTED_PROXIES": proxies}))
		if err != nil {
			t.Fatal(err)
		}
		return ipExtractor(c.TrustedProxies)
	}
	cases := []struct {
		name, proxies, remote, xff, want string
	}{
		{"no proxies: XFF ignored", "", "127.0.0.1:5555", "203.0.113.9", "127.0.0.1"},
		{"no proxies: private peer's XFF ignored", "", "10.0.0.2:5555", "203.0.113.9", "10.0.0.2"},
		{"trusted proxy: XFF believed", "127.0.0.1/32", "127.0.0.1:5555", "203.0.113.9", "203.0.113.9"},
		{"trusted proxy: rightmost untrusted hop", "127.0.0.1/32", "127.0.0.1:5555", "198.51.100.1, 203.0.113.9", "203.0.113.9"},
		{"trusted chain", "127.0.0.1/32,10.0.0.0/8", "127.0.0.1:5555", "203.0.113.9, 10.1.1.1", "203.0.113.9"},
		{"untrusted peer: XFF ignored", "127.0.0.1/32", "198.51.100.7:5555", "203.0.113.9", "198.51.100.7"},
		{"only the listed range is trusted, not all private nets", "127.0.0.1/32", "10.0.0.2:5555", "203.0.113.9", "10.0.0.2"},
		{"only the listed address is trusted, not all loopback", "10.0.0.0/8", "127.0.0.1:5555", "203.0.113.9", "127.0.0.1"},
		{"trusted proxy without XFF", "127.0.0.1/32", "127.0.0.1:5555", "", "127.0.0.1"},
		{"IPv6 proxy", "::1/128", "[::1]:5555", "2001:db8::7", "2001:db8::7"},
		{"bare address as a proxy", "127.0.0.1", "127.0.0.1:5555", "203.0.113.9", "203.0.113.9"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := realIP(load(t, tc.proxies), tc.remote, tc.xff); got != tc.want {
				t.Errorf("real IP = %q, want %q", got, tc.want)
			}
		})
	}
}

// The pool's default follows the server's cores: four a core, from 8 to 20.
func TestDefaultDBMaxConns(t *testing.T) {
	for cores, want := range map[int]int32{1: 8, 2: 8, 3: 12, 4: 16, 5: 20, 6: 20, 64: 20} {
		if got := DefaultDBMaxConns(cores); got != want {
			t.Errorf("%d cores: %d connections, want %d", cores, got, want)
		}
	}
}
