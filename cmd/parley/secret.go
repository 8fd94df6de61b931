package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/web"
)

// env reads a variable from the environment or, for the secrets of
// web.FileVars, from the file its _FILE variant names (web.LookupFile).
func env(name string) (string, error) {
	v, _, err := web.LookupFile(os.Getenv, os.ReadFile, name)
	return v, err
}

// checkSecretKey refuses to serve a database whose secrets the configured
// key cannot open (auth.CheckKey): one query at start, instead of every
// tenant's webhooks, tools and OAuth tokens failing one by one.
func checkSecretKey(ctx context.Context, store *db.DB, cfg web.Config) error {
	if len(cfg.SecretKey) == 0 {
		return nil // web.NewServer says what is missing
	}
	b, err := auth.NewRotatingBox(cfg.SecretKey, cfg.SecretKeyPrevious)
	if err != nil {
		return fmt.Errorf("PARLEY_SECRET_KEY: %w", err)
	}
	return auth.CheckKey(ctx, store.Pool(), b)
}

// secretRotate re-seals every secret of the database with PARLEY_SECRET_KEY
// (the new key) where PARLEY_SECRET_KEY_PREVIOUS (the old one) sealed it,
// printing what it did column by column.
func secretRotate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("secret rotate", stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	b, err := box()
	if err != nil {
		return err
	}
	if !b.Rotating() {
		return errors.New("PARLEY_SECRET_KEY_PREVIOUS: required: set PARLEY_SECRET_KEY to the new key and PARLEY_SECRET_KEY_PREVIOUS to the current one, on every instance and here")
	}
	return withDB(ctx, func(store *db.DB) error {
		if err := auth.CheckKey(ctx, store.Pool(), b); err != nil {
			return err
		}
		total := 0
		err := auth.RotateSecrets(ctx, store.Pool(), b, func(r auth.ColumnRotation) {
			if !r.Done {
				fmt.Fprintf(stdout, "pass %d  %-40s %6d re-sealed so far, %d already under the new key...\n", r.Pass, r.Column, r.Resealed, r.Current)
				return
			}
			total += r.Resealed
			fmt.Fprintf(stdout, "pass %d  %-40s %6d re-sealed  %6d already under the new key", r.Pass, r.Column, r.Resealed, r.Current)
			if r.Changed > 0 {
				fmt.Fprintf(stdout, "  %d changed meanwhile (read again)", r.Changed)
			}
			if r.Failed > 0 {
				fmt.Fprintf(stdout, "  %d open with neither key (rows %v)", r.Failed, r.FailedKeys)
			}
			fmt.Fprintln(stdout)
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%d secrets re-sealed: every secret is sealed with the new key. Remove PARLEY_SECRET_KEY_PREVIOUS "+
			"from every instance (restarting them), and keep the new key with the backups made from now on\n", total)
		return nil
	})
}
