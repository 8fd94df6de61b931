package main

// These tests change the process environment with t.Setenv, so none of them
// is parallel.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/dbtest"
	"github.com/parley/parley/migrations"
)

var cliKey = strings.Repeat("cd", 32)

// cliEnv points the commands at the package's test database and returns it.
func cliEnv(t *testing.T) *db.DB {
	t.Helper()
	store := dbtest.New(t)
	t.Setenv("DATABASE_URL", dbtest.URL())
	t.Setenv("PARLEY_SECRET_KEY", cliKey)
	return store
}

// testPasswords hashes at bcrypt's lowest cost: the default cost takes most
// of a second a hash under the race detector. Checks read the cost from the
// hash.
var testPasswords = auth.NewPasswords(bcrypt.MinCost)

// runCLI runs a command line in-process.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = run(ctx, args, &out, &errOut, testPasswords)
	return out.String(), errOut.String(), err
}

var slugSeq atomic.Int64

func uniqueSlug(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano()%1_000_000_000, slugSeq.Add(1))
}

// wantErr asserts err is non-nil and mentions every want.
func wantErr(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one mentioning %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}

// authenticate resolves a credential the way the API does.
func authenticate(t *testing.T, store *db.DB, header, value string) (auth.Principal, error) {
	t.Helper()
	r, _ := http.NewRequest("GET", "http://parley.test/tenants/x", nil)
	r.Header.Set(header, value)
	return (&auth.Authenticator{DB: store}).Authenticate(context.Background(), r)
}

// createTenant runs tenant create and decodes its output.
func createTenant(t *testing.T, args ...string) auth.Provisioned {
	t.Helper()
	out, errOut, err := runCLI(t, append([]string{"tenant", "create"}, args...)...)
	if err != nil {
		t.Fatalf("tenant create: %v\n%s", err, errOut)
	}
	var p auth.Provisioned
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("tenant create printed %q: %v", out, err)
	}
	return p
}

func TestTenantCreate(t *testing.T) {
	store := cliEnv(t)
	ctx := context.Background()
	slug := uniqueSlug("cli")
	email := "Owner-" + slug + "@Example.com"
	p := createTenant(t, "--slug", slug, "--name", "CLI Co", "--plan", "builder", "--owner-email", email, "--owner-password", "correct horse battery")

	if p.Slug != slug || p.Name != "CLI Co" || p.Plan != "builder" || p.ID == "" || p.OwnerEmail != email {
		t.Errorf("printed %+v", p)
	}
	if !strings.HasPrefix(p.Token, "ak_") || len(p.Token) < 40 {
		t.Errorf("token %q", p.Token)
	}
	if !slices.Equal(p.Scopes, auth.RESTScopes) {
		t.Errorf("scopes %v, want every REST scope", p.Scopes)
	}

	t.Run("the token authenticates with every scope", func(t *testing.T) {
		pr, err := authenticate(t, store, "Authorization", "Bearer "+p.Token)
		if err != nil {
			t.Fatal(err)
		}
		if pr.TenantID != p.ID || !slices.Equal(pr.Scopes, auth.RESTScopes) {
			t.Errorf("principal %+v", pr)
		}
		stored, err := store.TokenByHash(ctx, auth.HashToken(p.Token))
		if err != nil || stored.Legacy || stored.TenantID != p.ID {
			t.Errorf("stored token %+v, %v", stored, err)
		}
		if _, err := authenticate(t, store, "X-API-Key", p.Token); parley.ErrorKind(err) != parley.KindUnauthorized {
			t.Errorf("ak_ token in X-API-Key: %v", err)
		}
	})
	t.Run("the tenant has its default segment", func(t *testing.T) {
		var n int
		if err := store.Pool().QueryRow(ctx, `SELECT count(*) FROM segments WHERE tenant_id = $1 AND is_default`, p.ID).Scan(&n); err != nil || n != 1 {
			t.Errorf("default segments: %d, %v", n, err)
		}
	})
	t.Run("the owner can sign in", func(t *testing.T) {
		u, err := store.UserByEmail(ctx, strings.ToLower(email))
		if err != nil {
			t.Fatal(err)
		}
		if !testPasswords.Check(u.PasswordHash, "correct horse battery") || testPasswords.Check(u.PasswordHash, "wrong password!") {
			t.Error("password check")
		}
		if c, err := bcrypt.Cost([]byte(u.PasswordHash)); err != nil || c != testPasswords.Cost() {
			t.Errorf("hashed at cost %d (%v), want the cost of the hasher run was given, %d", c, err, testPasswords.Cost())
		}
		ms, err := store.Memberships(ctx, u.ID)
		if err != nil || len(ms) != 1 || ms[0].TenantSlug != slug || ms[0].Role != "owner" {
			t.Errorf("memberships %+v, %v", ms, err)
		}
	})
	t.Run("without an owner", func(t *testing.T) {
		out, _, err := runCLI(t, "tenant", "create", "--slug", uniqueSlug("noowner"), "--name", "No Owner", "--plan", "free")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out, "ownerEmail") || !strings.Contains(out, `"token": "ak_`) {
			t.Errorf("output %s", out)
		}
	})
	t.Run("name limit counts characters, not bytes", func(t *testing.T) {
		name := strings.Repeat("é", 255)
		p := createTenant(t, "--slug", uniqueSlug("utf8"), "--name", name, "--plan", "free")
		if p.Name != name {
			t.Errorf("name %q", p.Name)
		}
	})
	t.Run("duplicate slug", func(t *testing.T) {
		_, _, err := runCLI(t, "tenant", "create", "--slug", slug, "--name", "Again", "--plan", "free")
		wantErr(t, err, slug, "already exists")
		got, _ := store.TenantBySlug(ctx, slug)
		if got.Name != "CLI Co" {
			t.Errorf("duplicate create changed the tenant: %q", got.Name)
		}
	})
}

func TestTenantCreateErrors(t *testing.T) {
	store := cliEnv(t)
	ok := func(slug string) []string {
		return []string{"tenant", "create", "--slug", slug, "--name", "Name", "--plan", "starter"}
	}
	cases := []struct {
		name string
		args func(slug string) []string
		want []string
	}{
		{"upper-case slug", func(string) []string { return ok("Bad-Slug") }, []string{"--slug"}},
		{"slug with underscore", func(string) []string { return ok("bad_slug") }, []string{"--slug"}},
		{"slug starting with a hyphen", func(string) []string { return ok("-bad") }, []string{"--slug"}},
		{"slug of 101 characters", func(string) []string { return ok(strings.Repeat("a", 101)) }, []string{"--slug"}},
		{"missing slug", func(string) []string { return []string{"tenant", "create", "--name", "N", "--plan", "free"} }, []string{"--slug"}},
		{"missing name", func(s string) []string { return []string{"tenant", "create", "--slug", s, "--plan", "free"} }, []string{"--name"}},
		{"blank name", func(s string) []string {
			return []string{"tenant", "create", "--slug", s, "--name", "  ", "--plan", "free"}
		}, []string{"--name"}},
		{"name of 256 characters", func(s string) []string {
			return []string{"tenant", "create", "--slug", s, "--name", strings.Repeat("n", 256), "--plan", "free"}
		}, []string{"--name"}},
		{"unknown plan", func(s string) []string {
			return []string{"tenant", "create", "--slug", s, "--name", "N", "--plan", "gold"}
		}, []string{"--plan", "gold", "free, starter, builder, scale"}},
		{"missing plan", func(s string) []string { return []string{"tenant", "create", "--slug", s, "--name", "N"} }, []string{"--plan"}},
		{"short password", func(s string) []string {
			return append(ok(s), "--owner-email", "o@"+s+".test", "--owner-password", "short")
		}, []string{"--owner-password", "10"}},
		{"password over 72 bytes", func(s string) []string {
			return append(ok(s), "--owner-email", "o@"+s+".test", "--owner-password", strings.Repeat("p", 73))
		}, []string{"--owner-password", "72"}},
		{"email without password", func(s string) []string { return append(ok(s), "--owner-email", "o@"+s+".test") }, []string{"--owner-email", "--owner-password"}},
		{"password without email", func(s string) []string { return append(ok(s), "--owner-password", "long enough password") }, []string{"--owner-email", "--owner-password"}},
		{"not an email", func(s string) []string {
			return append(ok(s), "--owner-email", "nobody", "--owner-password", "long enough password")
		}, []string{"--owner-email", "nobody"}},
		{"unknown flag", func(s string) []string { return append(ok(s), "--colour", "red") }, []string{"colour"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			slug := uniqueSlug("err")
			_, _, err := runCLI(t, tc.args(slug)...)
			wantErr(t, err, tc.want...)
			if _, err := store.TenantBySlug(context.Background(), slug); parley.ErrorKind(err) != parley.KindNotFound {
				t.Errorf("a failed create left tenant %s behind (%v)", slug, err)
			}
		})
	}
	t.Run("missing DATABASE_URL", func(t *testing.T) {
		t.Setenv("DATABASE_URL", "")
		_, _, err := runCLI(t, ok(uniqueSlug("nodb"))...)
		wantErr(t, err, "DATABASE_URL")
	})
	t.Run("unreachable database", func(t *testing.T) {
		t.Setenv("DATABASE_URL", "postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
		_, _, err := runCLI(t, ok(uniqueSlug("nodb"))...)
		if err == nil {
			t.Fatal("no error")
		}
	})
	t.Run("missing PARLEY_SECRET_KEY", func(t *testing.T) {
		t.Setenv("PARLEY_SECRET_KEY", "")
		_, _, err := runCLI(t, ok(uniqueSlug("nokey"))...)
		wantErr(t, err, "PARLEY_SECRET_KEY")
	})
	t.Run("malformed PARLEY_SECRET_KEY", func(t *testing.T) {
		t.Setenv("PARLEY_SECRET_KEY", "not-hex")
		_, _, err := runCLI(t, ok(uniqueSlug("badkey"))...)
		wantErr(t, err, "PARLEY_SECRET_KEY")
	})
}

func TestTokenCreate(t *testing.T) {
	store := cliEnv(t)
	ctx := context.Background()
	ten := createTenant(t, "--slug", uniqueSlug("tok"), "--name", "Tokens", "--plan", "starter")

	type printed struct {
		ID     string   `json:"id"`
		Tenant string   `json:"tenant"`
		Token  string   `json:"token"`
		Scopes []string `json:"scopes"`
		Legacy bool     `json:"legacy"`
	}
	create := func(t *testing.T, args ...string) printed {
		t.Helper()
		out, errOut, err := runCLI(t, append([]string{"token", "create", "--tenant", ten.Slug}, args...)...)
		if err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		var p printed
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatalf("output %q: %v", out, err)
		}
		return p
	}

	t.Run("scoped token", func(t *testing.T) {
		p := create(t, "--scopes", "stats:read,settings:read,stats:read", "--name", "Reporting")
		if !strings.HasPrefix(p.Token, "ak_") || p.Legacy || p.Tenant != ten.Slug {
			t.Errorf("printed %+v", p)
		}
		want := []string{auth.ScopeSettingsRead, auth.ScopeStatsRead} // canonical order, no duplicates
		if !slices.Equal(p.Scopes, want) {
			t.Errorf("scopes %v, want %v", p.Scopes, want)
		}
		pr, err := authenticate(t, store, "Authorization", "Bearer "+p.Token)
		if err != nil || pr.TenantID != ten.ID || !slices.Equal(pr.Scopes, want) || pr.TokenID != p.ID {
			t.Errorf("principal %+v, %v", pr, err)
		}
		tokens, err := store.ListTokens(ctx, ten.ID)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, tk := range tokens {
			if tk.ID == p.ID {
				found = tk.Name == "Reporting" && strings.HasPrefix(p.Token, tk.DisplayPrefix)
			}
		}
		if !found {
			t.Errorf("token %s not listed with its name and prefix: %+v", p.ID, tokens)
		}
	})
	t.Run("space-separated scopes", func(t *testing.T) {
		p := create(t, "--scopes", "corpus:read corpus:write")
		if !slices.Equal(p.Scopes, []string{auth.ScopeCorpusRead, auth.ScopeCorpusWrite}) {
			t.Errorf("scopes %v", p.Scopes)
		}
	})
	t.Run("legacy key with the default scope", func(t *testing.T) {
		p := create(t, "--legacy")
		if strings.HasPrefix(p.Token, "ak_") || !p.Legacy || !slices.Equal(p.Scopes, []string{auth.ScopeStatsRead}) {
			t.Errorf("printed %+v", p)
		}
		pr, err := authenticate(t, store, "X-API-Key", p.Token)
		if err != nil || pr.TenantID != ten.ID || !slices.Equal(pr.Scopes, []string{auth.ScopeStatsRead}) {
			t.Errorf("X-API-Key: %+v, %v", pr, err)
		}
		if _, err := authenticate(t, store, "Authorization", "Bearer "+p.Token); parley.ErrorKind(err) != parley.KindUnauthorized {
			t.Errorf("legacy key as Bearer: %v", err)
		}
	})
	t.Run("legacy key with chosen scopes", func(t *testing.T) {
		p := create(t, "--legacy", "--scopes", "settings:read")
		if !p.Legacy || !slices.Equal(p.Scopes, []string{auth.ScopeSettingsRead}) {
			t.Errorf("printed %+v", p)
		}
		if pr, err := authenticate(t, store, "X-API-Key", p.Token); err != nil || !pr.HasScope(auth.ScopeSettingsRead) {
			t.Errorf("X-API-Key: %+v, %v", pr, err)
		}
	})
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"unknown scope", []string{"token", "create", "--tenant", ten.Slug, "--scopes", "settings:read,bogus:scope"}, []string{"--scopes", "bogus:scope"}},
		{"MCP scope is not a REST scope", []string{"token", "create", "--tenant", ten.Slug, "--scopes", "mcp:corpus:read"}, []string{"--scopes", "mcp:corpus:read"}},
		{"missing scopes", []string{"token", "create", "--tenant", ten.Slug}, []string{"--scopes", "required"}},
		{"only separators", []string{"token", "create", "--tenant", ten.Slug, "--scopes", ", ,"}, []string{"--scopes"}},
		{"blank name", []string{"token", "create", "--tenant", ten.Slug, "--scopes", "stats:read", "--name", "  "}, []string{"--name", "Give the token a name"}},
		{"name too long", []string{"token", "create", "--tenant", ten.Slug, "--scopes", "stats:read", "--name", strings.Repeat("n", parley.MaxTokenName+1)}, []string{"--name", "at most"}},
		{"missing tenant", []string{"token", "create", "--scopes", "stats:read"}, []string{"--tenant"}},
		{"unknown tenant", []string{"token", "create", "--tenant", "no-such-" + ten.Slug, "--scopes", "stats:read"}, []string{"--tenant", "not found"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := store.ListTokens(ctx, ten.ID)
			_, _, err := runCLI(t, tc.args...)
			wantErr(t, err, tc.want...)
			after, _ := store.ListTokens(ctx, ten.ID)
			if len(after) != len(before) {
				t.Errorf("a failed token create stored a token")
			}
		})
	}
}

func TestUserCreate(t *testing.T) {
	store := cliEnv(t)
	ctx := context.Background()
	slug := uniqueSlug("usr")
	ownerEmail := "first@" + slug + ".test"
	first := createTenant(t, "--slug", slug, "--name", "Users", "--plan", "starter", "--owner-email", ownerEmail, "--owner-password", "first password")
	second := createTenant(t, "--slug", uniqueSlug("usr2"), "--name", "Users Two", "--plan", "free")

	t.Run("new user becomes an owner", func(t *testing.T) {
		email := "new@" + slug + ".test"
		out, errOut, err := runCLI(t, "user", "create", "--email", email, "--password", "new user password", "--tenant", first.Slug)
		if err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		var p map[string]any
		if err := json.Unmarshal([]byte(out), &p); err != nil || p["email"] != email || p["tenant"] != first.Slug || p["role"] != "owner" {
			t.Errorf("output %q (%v)", out, err)
		}
		u, err := store.UserByEmail(ctx, email)
		if err != nil {
			t.Fatal(err)
		}
		if !testPasswords.Check(u.PasswordHash, "new user password") {
			t.Error("password does not match")
		}
		ms, err := store.Memberships(ctx, u.ID)
		if err != nil || len(ms) != 1 || ms[0].TenantID != first.ID || ms[0].Role != "owner" {
			t.Errorf("memberships %+v, %v", ms, err)
		}
	})
	t.Run("existing user: password reset and a second tenant", func(t *testing.T) {
		_, errOut, err := runCLI(t, "user", "create", "--email", strings.ToUpper(ownerEmail), "--password", "second password", "--tenant", second.Slug)
		if err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		u, err := store.UserByEmail(ctx, ownerEmail)
		if err != nil {
			t.Fatal(err)
		}
		if !testPasswords.Check(u.PasswordHash, "second password") || testPasswords.Check(u.PasswordHash, "first password") {
			t.Error("password was not reset")
		}
		ms, err := store.Memberships(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		var slugs []string
		for _, m := range ms {
			slugs = append(slugs, m.TenantSlug)
		}
		slices.Sort(slugs)
		want := []string{first.Slug, second.Slug}
		slices.Sort(want)
		if !slices.Equal(slugs, want) {
			t.Errorf("memberships %v, want %v", slugs, want)
		}
		var users int
		if err := store.Pool().QueryRow(ctx, `SELECT count(*) FROM users WHERE lower(email) = lower($1)`, ownerEmail).Scan(&users); err != nil || users != 1 {
			t.Errorf("%d users with that email (%v)", users, err)
		}
	})
	t.Run("again on the same tenant is harmless", func(t *testing.T) {
		if _, _, err := runCLI(t, "user", "create", "--email", ownerEmail, "--password", "third password", "--tenant", first.Slug); err != nil {
			t.Fatal(err)
		}
		u, _ := store.UserByEmail(ctx, ownerEmail)
		ms, _ := store.Memberships(ctx, u.ID)
		if len(ms) != 2 || !testPasswords.Check(u.PasswordHash, "third password") {
			t.Errorf("memberships %+v", ms)
		}
	})
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"bad email", []string{"--email", "nobody", "--password", "long enough pw", "--tenant", first.Slug}, []string{"--email"}},
		{"short password", []string{"--email", "x@" + slug + ".test", "--password", "123456789", "--tenant", first.Slug}, []string{"--password", "10"}},
		{"missing tenant", []string{"--email", "x@" + slug + ".test", "--password", "long enough pw"}, []string{"--tenant"}},
		{"unknown tenant", []string{"--email", "x@" + slug + ".test", "--password", "long enough pw", "--tenant", "nope-" + slug}, []string{"--tenant"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runCLI(t, append([]string{"user", "create"}, tc.args...)...)
			wantErr(t, err, tc.want...)
			if _, err := store.UserByEmail(ctx, "x@"+slug+".test"); parley.ErrorKind(err) != parley.KindNotFound {
				t.Errorf("a failed user create made the user (%v)", err)
			}
		})
	}
}

func TestCommandLine(t *testing.T) {
	cliEnv(t)
	t.Run("no arguments", func(t *testing.T) {
		_, errOut, err := runCLI(t)
		if err == nil || !strings.Contains(errOut, "usage: parley") {
			t.Errorf("err %v, stderr %q", err, errOut)
		}
	})
	t.Run("unknown command", func(t *testing.T) {
		_, errOut, err := runCLI(t, "frobnicate", "now")
		wantErr(t, err, "frobnicate")
		if !strings.Contains(errOut, "usage: parley") {
			t.Errorf("stderr %q", errOut)
		}
	})
	t.Run("create of an unknown noun", func(t *testing.T) {
		_, _, err := runCLI(t, "widget", "create")
		wantErr(t, err, "widget create")
	})
	t.Run("tenant without create", func(t *testing.T) {
		_, _, err := runCLI(t, "tenant", "delete")
		wantErr(t, err, "tenant delete")
	})
	t.Run("help", func(t *testing.T) {
		out, _, err := runCLI(t, "help")
		if err != nil || !strings.Contains(out, "tenant create") || !strings.Contains(out, "seed-demo") {
			t.Errorf("err %v, stdout %q", err, out)
		}
	})
	t.Run("migrate without DATABASE_URL", func(t *testing.T) {
		t.Setenv("DATABASE_URL", "")
		_, _, err := runCLI(t, "migrate")
		wantErr(t, err, "DATABASE_URL")
	})
	t.Run("seed-demo without DATABASE_URL", func(t *testing.T) {
		t.Setenv("DATABASE_URL", "")
		_, _, err := runCLI(t, "seed-demo")
		wantErr(t, err, "DATABASE_URL")
	})
	t.Run("serve refuses a malformed variable", func(t *testing.T) {
		t.Setenv("PARLEY_LOG_FORMAT", "xml")
		_, _, err := runCLI(t, "serve")
		wantErr(t, err, "PARLEY_LOG_FORMAT")
	})
	t.Run("serve refuses an unknown PARLEY_ variable", func(t *testing.T) {
		t.Setenv("PARLEY_TYPO_FOR_TEST", "1")
		_, _, err := runCLI(t, "serve")
		wantErr(t, err, "PARLEY_TYPO_FOR_TEST")
	})
	t.Run("serve without DATABASE_URL", func(t *testing.T) {
		t.Setenv("DATABASE_URL", "")
		_, _, err := runCLI(t, "serve")
		wantErr(t, err, "DATABASE_URL")
	})
}

func TestSeedDemoNotEmpty(t *testing.T) {
	store := cliEnv(t)
	createTenant(t, "--slug", uniqueSlug("seed"), "--name", "Existing", "--plan", "free")
	before, err := store.CountTenants(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, "seed-demo")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "already has tenants") || strings.Contains(out, "ak_") {
		t.Errorf("stdout %q", out)
	}
	after, _ := store.CountTenants(context.Background())
	if after != before {
		t.Errorf("tenants %d -> %d", before, after)
	}
	if _, err := store.TenantBySlug(context.Background(), "demo"); parley.ErrorKind(err) != parley.KindNotFound {
		t.Errorf("demo tenant created on a database with tenants (%v)", err)
	}
}

// emptyDatabase clones a fresh database from the migrated template and drops it after the test.
func emptyDatabase(t *testing.T) string {
	t.Helper()
	admin := os.Getenv("PARLEY_TEST_DATABASE_URL")
	if admin == "" {
		t.Fatal("PARLEY_TEST_DATABASE_URL is not set")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := dbtest.Prefix + "seed_" + hex.EncodeToString(b)
	// another test binary may be cloning the template at this moment: retry briefly
	for i := 0; ; i++ {
		_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE "+dbtest.Template)
		if err == nil || i == 20 {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("creating %s: %v", name, err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), admin)
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Error(err)
		}
	})
	u := admin
	q := ""
	if i := strings.IndexByte(u, '?'); i >= 0 {
		u, q = u[:i], u[i:]
	}
	return u[:strings.LastIndexByte(u, '/')+1] + name + q
}

func TestSeedDemoEmpty(t *testing.T) {
	cliEnv(t)
	url := emptyDatabase(t)
	t.Setenv("DATABASE_URL", url)
	ctx := context.Background()

	out, errOut, err := runCLI(t, "seed-demo")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	field := func(label string) string {
		m := regexp.MustCompile(`(?m)^\s*` + label + `:\s+(\S+)\s*$`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no %s in %q", label, out)
		}
		return m[1]
	}
	email, password, token := field("email"), field("password"), field("API token")
	if !strings.HasPrefix(token, "ak_") || len(password) < auth.MinPasswordLength {
		t.Errorf("token %q password %q", token, password)
	}
	if !strings.Contains(out, "Bearer "+token) || !strings.Contains(out, "http://localhost:8080/tenants/demo") ||
		!strings.Contains(out, "http://localhost:8080/admin/test-chat") {
		t.Errorf("no curl example or test chat in %q", out)
	}

	store, err := db.Open(ctx, url, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	demo, err := store.TenantBySlug(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if demo.Plan != "scale" || demo.Name != "Demo Company" {
		t.Errorf("demo tenant %s on %s", demo.Name, demo.Plan)
	}
	u, err := store.UserByEmail(ctx, email)
	if err != nil || !testPasswords.Check(u.PasswordHash, password) {
		t.Errorf("demo owner login: %v", err)
	}
	if ms, err := store.Memberships(ctx, u.ID); err != nil || len(ms) != 1 || ms[0].TenantID != demo.ID {
		t.Errorf("demo memberships %+v, %v", ms, err)
	}
	pr, err := authenticate(t, store, "Authorization", "Bearer "+token)
	if err != nil || pr.TenantID != demo.ID || !slices.Equal(pr.Scopes, auth.RESTScopes) {
		t.Errorf("demo token: %+v, %v", pr, err)
	}

	// The knowledge base describes Parley, so that the newcomer's first
	// question gets an answer offline: the local provider quotes the entries
	// of the prompt's retrieval that share the question's words.
	entries, err := store.PromptCorpus(ctx, demo.ID, "", "", 50)
	if err != nil || len(entries) < 5 {
		t.Fatalf("demo knowledge base: %d entries, %v", len(entries), err)
	}
	var passages []llm.Passage
	for _, e := range entries {
		passages = append(passages, llm.Passage{Title: e.Title, Content: e.Content})
	}
	for question, want := range map[string]string{
		"What is Parley?":                         "What is Parley?",
		"How do I add the chat to my website?":    "Adding the chat widget to a website",
		"How can I connect OpenAI?":               "Connecting a language model",
		"Where do my leads go?":                   "Leads, submissions and webhooks",
		"Can it answer phone calls?":              "Phone calls",
		"how do i import a CSV of my FAQ entries": "The knowledge base",
	} {
		best := agent.LocalRank(question, passages)
		if len(best) == 0 || best[0].Title != want {
			t.Errorf("%q: first passage %v, want %q", question, best, want)
		}
	}

	t.Run("a second run changes nothing", func(t *testing.T) {
		out, _, err := runCLI(t, "seed-demo")
		if err != nil || !strings.Contains(out, "already has tenants") || strings.Contains(out, "ak_") {
			t.Errorf("err %v stdout %q", err, out)
		}
		if n, _ := store.CountTenants(ctx); n != 1 {
			t.Errorf("%d tenants", n)
		}
	})
}

func TestFindPGBin(t *testing.T) {
	dir, err := findPGBin()
	if err != nil {
		t.Fatal(err)
	}
	for _, bin := range []string{"initdb", "pg_ctl"} {
		fi, err := os.Stat(filepath.Join(dir, bin))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			t.Errorf("%s in %s: %v", bin, dir, err)
		}
	}
	t.Run("pgVersion", func(t *testing.T) {
		for path, want := range map[string]int{
			"/usr/lib/postgresql/16/bin/initdb": 16,
			"/usr/lib/postgresql/9/bin/initdb":  9,
			"/usr/local/bin/initdb":             0,
		} {
			if got := pgVersion(path); got != want {
				t.Errorf("pgVersion(%s) = %d, want %d", path, got, want)
			}
		}
	})
}

// TestDevDBPortTaken: dev-db on a port another program holds says which
// port and how to choose another, instead of pg_ctl's failure.
func TestDevDBPortTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	var out, errOut bytes.Buffer
	err = devDB(context.Background(), []string{"--dir", filepath.Join(t.TempDir(), "pg"), "--port", strconv.Itoa(port)}, &out, &errOut)
	// as root, the cluster's directory is made in a temporary one the postgres user reaches
	if m := regexp.MustCompile(`using (\S+)`).FindStringSubmatch(errOut.String()); m != nil {
		_ = os.RemoveAll(filepath.Dir(m[1]))
	}
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("port %d on 127.0.0.1 is taken", port)) || !strings.Contains(err.Error(), "PARLEY_DEV_PG_PORT") {
		t.Errorf("dev-db on a taken port: %v", err)
	}
}

// The server collects garbage at serveGCPercent unless GOGC says
// otherwise, which it leaves as the runtime read it.
func TestServeGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	serveGC(func(string) string { return "" })
	if got := debug.SetGCPercent(serveGCPercent); got != serveGCPercent {
		t.Errorf("GOGC unset: target %d, want %d", got, serveGCPercent)
	}
	debug.SetGCPercent(150) // as the runtime would have read GOGC=150
	serveGC(func(k string) string { return map[string]string{"GOGC": "150"}[k] })
	if got := debug.SetGCPercent(150); got != 150 {
		t.Errorf("GOGC=150: target %d, want 150 left alone", got)
	}
}

// syncBuffer is a bytes.Buffer a running server writes to while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// parley serve, started the way make run starts it (its own variables in
// the environment), prints the address it really listens on.
func TestServeBanner(t *testing.T) {
	cliEnv(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	t.Setenv("PARLEY_ADDR", fmt.Sprintf("127.0.0.1:%d", port))
	t.Setenv("PARLEY_BASE_URL", "")
	t.Setenv("PARLEY_DEV_PG_PORT", "5440") // make run's, as the README advises when 5438 is taken
	t.Setenv("PARLEY_TEST_PG_PORT", "5441")
	t.Setenv("PARLEY_LOG_FORMAT", "text")
	t.Setenv("PARLEY_DRAIN_DELAY", "0") // web's TestRunDrainsBeforeClosing drains

	var out, errOut syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, &out, &errOut, testPasswords) }()
	want := fmt.Sprintf("Parley listening on 127.0.0.1:%d: open http://localhost:%d (admin: http://localhost:%d/admin)\n", port, port, port)
	deadline := time.Now().Add(30 * time.Second)
	for out.String() == "" && time.Now().Before(deadline) {
		select {
		case err := <-done:
			cancel()
			t.Fatalf("serve stopped: %v\n%s", err, errOut.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if got := out.String(); got != want {
		t.Errorf("banner %q, want %q", got, want)
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", port))
	if err != nil {
		t.Error(err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("healthz %d", resp.StatusCode)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v\n%s", err, errOut.String())
	}
}

// make test stops its cluster at the end with dev-db --stop, which frees the
// port for make test in another checkout; stopping twice is no error.
func TestDevDBStop(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	dir := filepath.Join(t.TempDir(), "pg")
	var out, errOut bytes.Buffer
	if err := devDB(context.Background(), []string{"--dir", dir, "--port", strconv.Itoa(port), "--db", "stoptest", "--fast"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	// as root, the cluster may live in a temporary directory the postgres user reaches
	if m := regexp.MustCompile(`using (\S+)`).FindStringSubmatch(errOut.String()); m != nil {
		t.Cleanup(func() { _ = os.RemoveAll(filepath.Dir(m[1])) })
	}
	stop := func() {
		t.Helper()
		var o, e bytes.Buffer
		if err := devDB(context.Background(), []string{"--dir", dir, "--stop"}, &o, &e); err != nil || o.Len() != 0 {
			t.Fatalf("stop: %v, stdout %q\n%s", err, o.String(), e.String())
		}
	}
	t.Cleanup(func() { stop() })
	conn, err := pgx.Connect(context.Background(), strings.TrimSpace(out.String()))
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.Close(context.Background())
	if portFree(port) == nil {
		t.Fatal("the cluster does not listen")
	}
	stop()
	if err := portFree(port); err != nil {
		t.Errorf("after --stop: %v", err)
	}
	stop()
}

// parley serve refuses a database whose schema is behind its migrations and
// says what to run; two `parley migrate` at once (an upgrade that runs it
// beside each instance) both end well, one after the other, and serve then
// starts on the migrated schema.
func TestServeNeedsTheSchemaMigrated(t *testing.T) {
	cliEnv(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, os.Getenv("PARLEY_TEST_DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	name := dbtest.Prefix + "schema_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	u, err := url.Parse(dbtest.URL())
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	fresh := u.String()
	t.Setenv("DATABASE_URL", fresh)
	t.Setenv("PARLEY_ADDR", "127.0.0.1:0")
	if _, _, err := runCLI(t, "serve"); err == nil || !strings.Contains(err.Error(), "run `parley migrate` first") {
		t.Fatalf("serve on an empty database: %v, want the advice to migrate", err)
	}

	pool, err := pgxpool.New(ctx, fresh)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- migrations.Up(ctx, pool) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("one of two migrations at once: %v", err)
		}
	}
	current, target, err := migrations.Versions(ctx, pool)
	if err != nil || current != target {
		t.Fatalf("after migrating: version %d of %d (%v)", current, target, err)
	}
	store, err := db.Open(ctx, fresh, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := schemaReady(ctx, store); err != nil {
		t.Errorf("a migrated schema: %v", err)
	}
}
