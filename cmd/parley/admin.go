package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
)

func tenantCreate(ctx context.Context, args []string, stdout, stderr io.Writer, pws *auth.Passwords) error {
	fs := newFlags("tenant create", stderr)
	slug := fs.String("slug", "", "URL-safe tenant slug")
	name := fs.String("name", "", "display name")
	plan := fs.String("plan", "", "plan: "+strings.Join(parley.PlanNames(), ", "))
	email := fs.String("owner-email", "", "owner login email")
	password := fs.String("owner-password", "", "owner login password (at least 10 characters)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	b, err := box()
	if err != nil {
		return err
	}
	return withDB(ctx, func(store *db.DB) error {
		p, err := auth.Provision(ctx, store, b, pws, parley.NewTenantInput{Slug: *slug, Name: *name, Plan: *plan, OwnerEmail: *email, OwnerPassword: *password})
		if err != nil {
			return flagErrors(err, tenantFlags)
		}
		return printJSON(stdout, p)
	})
}

func tokenCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("token create", stderr)
	tenant := fs.String("tenant", "", "tenant slug")
	scopesFlag := fs.String("scopes", "", "comma-separated scopes: "+strings.Join(auth.RESTScopes, ","))
	name := fs.String("name", "Created from the command line", "label shown in the dashboard")
	legacy := fs.Bool("legacy", false, "create a legacy plain key (sent in X-API-Key); default scope stats:read")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tenant == "" {
		return errors.New("--tenant: required")
	}
	in := parley.TokenInput{Name: *name, Scopes: strings.FieldsFunc(*scopesFlag, func(r rune) bool { return r == ',' || r == ' ' })}
	switch {
	case *scopesFlag == "" && *legacy:
		in.Scopes = auth.LegacyKeyScopes
	case *scopesFlag == "":
		return errors.New("--scopes: required")
	}
	if err := in.Check(auth.RESTScopes).Err(); err != nil {
		return flagErrors(err, tokenFlags)
	}
	return withDB(ctx, func(store *db.DB) error {
		t, err := store.TenantBySlug(ctx, *tenant)
		if err != nil {
			return fmt.Errorf("--tenant: %w", err)
		}
		token, nt := auth.NewToken(t.ID, in.Name, in.Scopes, *legacy)
		stored, err := store.CreateToken(ctx, nt)
		if err != nil {
			return err
		}
		return printJSON(stdout, map[string]any{"id": stored.ID, "tenant": t.Slug, "token": token, "scopes": in.Scopes, "legacy": *legacy})
	})
}

func userCreate(ctx context.Context, args []string, stdout, stderr io.Writer, pws *auth.Passwords) error {
	fs := newFlags("user create", stderr)
	email := fs.String("email", "", "login email")
	password := fs.String("password", "", "password (at least 10 characters)")
	tenant := fs.String("tenant", "", "tenant slug the user becomes an owner of")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case !strings.Contains(*email, "@"):
		return fmt.Errorf("--email: %q is not an email address", *email)
	case *tenant == "":
		return errors.New("--tenant: required")
	}
	hash, err := pws.Hash(*password)
	if err != nil {
		return fmt.Errorf("--password: %w", err)
	}
	return withDB(ctx, func(store *db.DB) error {
		t, err := store.TenantBySlug(ctx, *tenant)
		if err != nil {
			return fmt.Errorf("--tenant: %w", err)
		}
		if err := store.AddOwner(ctx, t.ID, *email, hash, true); err != nil {
			return err
		}
		return printJSON(stdout, map[string]any{"email": *email, "tenant": t.Slug, "role": "owner"})
	})
}

// seedDemo creates the demo tenant on an empty database and prints its logins once.
func seedDemo(ctx context.Context, stdout io.Writer, pws *auth.Passwords) error {
	b, err := box()
	if err != nil {
		return err
	}
	return withDB(ctx, func(store *db.DB) error {
		n, err := store.CountTenants(ctx)
		if err != nil {
			return err
		}
		if n > 0 {
			fmt.Fprintln(stdout, "Database already has tenants; demo logins were printed when it was first created.")
			return nil
		}
		password := "demo-" + strings.ToLower(strings.TrimRight(fmt.Sprintf("%x", auth.RandomBytes(6)), "="))
		p, err := auth.Provision(ctx, store, b, pws, parley.NewTenantInput{Slug: "demo", Name: "Demo Company", Plan: "scale", OwnerEmail: "owner@demo.parley.local", OwnerPassword: password})
		if err != nil {
			return err
		}
		plan, _ := parley.PlanByName(p.Plan)
		if err := seedDemoCorpus(ctx, store, p.ID, plan.CorpusLimit); err != nil {
			return fmt.Errorf("seeding the demo knowledge base: %w", err)
		}
		// The addresses parley serve will have (PARLEY_BASE_URL, else
		// localhost and PARLEY_ADDR's port).
		base := "http://localhost:8080"
		if cfg, err := loadConfig(); err == nil {
			base = cfg.BaseURL
		}
		fmt.Fprintf(stdout, `
Demo tenant created (shown once; keep it):
  dashboard:  sign in at %s/admin/login
  email:      %s
  password:   %s
  API token:  %s
  try:        curl -H "Authorization: Bearer %s" %s/tenants/demo
  chat:       ask "What is Parley?" at %s/admin/test-chat (the demo's knowledge base answers)

`, base, p.OwnerEmail, password, p.Token, p.Token, base, base)
		return nil
	})
}

// flagField names the flag that gives an input's field.
type flagField struct{ field, flag string }

// tenantFlags are tenant create's flags, in the order of its usage, named
// by the fields of parley.NewTenantInput.
var tenantFlags = []flagField{
	{"slug", "--slug"}, {"name", "--name"}, {"plan", "--plan"},
	{"ownerEmail", "--owner-email"}, {"ownerPassword", "--owner-password"},
}

// tokenFlags are token create's flags that parley.TokenInput's rules
// check, in the order of its usage.
var tokenFlags = []flagField{{"name", "--name"}, {"scopes", "--scopes"}}

// flagErrors words a refused input in terms of the command's flags.
func flagErrors(err error, flags []flagField) error {
	var e *parley.Error
	if !errors.As(err, &e) {
		return err
	}
	fields, ok := e.Details.(map[string]string)
	if !ok {
		return err
	}
	var parts []string
	for _, f := range flags {
		if msg, bad := fields[f.field]; bad {
			parts = append(parts, f.flag+": "+msg)
		}
	}
	return errors.New(strings.Join(parts, "; "))
}
