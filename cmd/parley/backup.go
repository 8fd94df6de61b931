package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
)

// Backups are pg_dump's custom format of the schema Parley owns: public,
// where the goose migrations and River create every table, with the
// extensions installed there (pg_trgm, btree_gin). The key check of
// migration 00053 travels in it, so that a restore can tell before writing
// anything whether the key in hand opens the backup's secrets.

// backup writes the database of DATABASE_URL to --out, once
// PARLEY_SECRET_KEY is known to open its secrets (a backup the key in
// hand cannot restore is worth nothing).
func backup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("backup", stderr)
	out := fs.String("out", "", "the file to write (pg_dump's custom format)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("--out: required (the backup file to write)")
	}
	b, err := box()
	if err != nil {
		return err
	}
	dsn, err := env("DATABASE_URL")
	if err != nil {
		return err
	}
	return withDB(ctx, func(store *db.DB) error {
		if err := auth.CheckKey(ctx, store.Pool(), b); err != nil {
			return fmt.Errorf("backup refused: %w", err)
		}
		rows, err := store.Pool().Query(ctx, `SELECT e.extname FROM pg_extension e
			JOIN pg_namespace n ON n.oid = e.extnamespace WHERE n.nspname = 'public' ORDER BY 1`)
		if err != nil {
			return err
		}
		var exts []string
		for rows.Next() {
			var e string
			if err := rows.Scan(&e); err != nil {
				return err
			}
			exts = append(exts, e)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		// Written beside the target and renamed when complete, so that a
		// backup cut short never passes for one.
		partial := *out + ".partial"
		pgArgs := []string{"--format=custom", "--schema=public", "--file=" + partial}
		for _, e := range exts {
			pgArgs = append(pgArgs, "--extension="+e)
		}
		if err := runPG(ctx, "pg_dump", dsn, pgArgs, nil); err != nil {
			_ = os.Remove(partial)
			return err
		}
		if err := os.Rename(partial, *out); err != nil {
			return err
		}
		var tenants int
		if err := store.Pool().QueryRow(ctx, `SELECT count(*) FROM tenants`).Scan(&tenants); err != nil {
			return err
		}
		st, err := os.Stat(*out)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "backup written to %s (%d bytes, %d tenants); it opens only with this PARLEY_SECRET_KEY, which it does not hold: keep the key apart\n",
			*out, st.Size(), tenants)
		return nil
	})
}

// restore loads a backup of parley backup into the database of
// DATABASE_URL, which must be empty: it refuses before writing anything
// when PARLEY_SECRET_KEY does not open the backup's secrets.
func restore(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("restore", stderr)
	in := fs.String("in", "", "the backup to restore (written by parley backup)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" {
		return errors.New("--in: required (the backup file to restore)")
	}
	if _, err := os.Stat(*in); err != nil {
		return fmt.Errorf("--in: %v", err)
	}
	b, err := box()
	if err != nil {
		return err
	}
	dsn, err := env("DATABASE_URL")
	if err != nil {
		return err
	}
	check, err := backupKeyCheck(ctx, *in)
	if err != nil {
		return err
	}
	if check == nil {
		return fmt.Errorf("restore refused: %s holds no secret key check: it was not written by parley backup (restore it with pg_restore, then start parley serve, which checks the key)", *in)
	}
	if err := auth.OpenKeyCheck(b, check); err != nil {
		return fmt.Errorf("restore refused: PARLEY_SECRET_KEY does not open the secrets of %s: they were sealed with another key. "+
			"Set the key the backup was made with (kept apart from it); without it the backup cannot be used", *in)
	}
	return withDB(ctx, func(store *db.DB) error {
		var name string
		var tables int
		if err := store.Pool().QueryRow(ctx, `SELECT current_database(), (SELECT count(*) FROM pg_class c
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'S'))`).Scan(&name, &tables); err != nil {
			return err
		}
		if tables > 0 {
			return fmt.Errorf("restore refused: database %s is not empty (%d tables and sequences in its public schema); "+
				"create an empty one (createdb) and point DATABASE_URL at it, or drop this one first if it is meant to go", name, tables)
		}
		list, err := restoreList(ctx, *in)
		if err != nil {
			return err
		}
		defer os.Remove(list)
		if err := runPG(ctx, "pg_restore", dsn, []string{"--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction",
			"--use-list=" + list, *in}, nil); err != nil {
			return err
		}
		if err := auth.CheckKey(ctx, store.Pool(), b); err != nil {
			return err
		}
		var tenants int
		if err := store.Pool().QueryRow(ctx, `SELECT count(*) FROM tenants`).Scan(&tenants); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "restored %s into %s: %d tenants; run parley migrate if this parley is newer than the backup, then parley serve\n", *in, name, tenants)
		return nil
	})
}

// restoreList writes the table of contents of a backup to restore, beside
// it in a temporary file: all of it but the creation of the schema public,
// which every database has already (pg_dump --schema=public dumps it).
func restoreList(ctx context.Context, file string) (string, error) {
	var toc bytes.Buffer
	if err := runPG(ctx, "pg_restore", "", []string{"--list", file}, &toc); err != nil {
		return "", fmt.Errorf("reading %s: %w", file, err)
	}
	var kept strings.Builder
	for _, line := range strings.SplitAfter(toc.String(), "\n") {
		// An entry is "id; catalog oid SCHEMA - public owner".
		if _, entry, ok := strings.Cut(line, "; "); ok && strings.Contains(entry, " SCHEMA - public ") {
			continue
		}
		kept.WriteString(line)
	}
	f, err := os.CreateTemp("", "parley-restore-*.list")
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := f.WriteString(kept.String()); err != nil {
		return "", err
	}
	return f.Name(), nil
}

// backupKeyCheck reads the sealed key check out of a backup (the data of
// its secret_key_check table, as pg_restore prints it), nil when it has
// none.
func backupKeyCheck(ctx context.Context, file string) ([]byte, error) {
	var out bytes.Buffer
	if err := runPG(ctx, "pg_restore", "", []string{"--data-only", "--table=secret_key_check", "--file=-", file}, &out); err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	inCopy := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "COPY ") && strings.Contains(line, "secret_key_check"):
			inCopy = true
		case inCopy && line != `\.`:
			// COPY's text format: id, then the sealed bytea as \\x<hex>.
			fields := strings.Split(line, "\t")
			if len(fields) < 2 || !strings.HasPrefix(fields[1], `\\x`) {
				return nil, fmt.Errorf("%s: its secret key check is unreadable", file)
			}
			v, err := hex.DecodeString(fields[1][3:])
			if err != nil {
				return nil, fmt.Errorf("%s: its secret key check is unreadable", file)
			}
			return v, nil
		case inCopy:
			return nil, nil
		}
	}
	return nil, sc.Err()
}

// runPG runs one of PostgreSQL's client programs on the database of dsn
// (none when dsn is ""), its output to out when not nil. A password in
// the URL goes in PGPASSWORD, not on a command line others can read.
func runPG(ctx context.Context, tool, dsn string, args []string, out io.Writer) error {
	bin, err := pgTool(tool)
	if err != nil {
		return err
	}
	environ := os.Environ()
	if dsn != "" {
		var password string
		dsn, password = splitPassword(dsn)
		if password != "" {
			environ = append(environ, "PGPASSWORD="+password)
		}
		args = append([]string{"--dbname=" + dsn}, args...)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = environ
	var errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &errOut
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %v: %s", tool, err, strings.TrimSpace(errOut.String()))
	}
	return nil
}

// splitPassword takes the password out of a postgres:// URL; a DSN of
// key=value pairs is left as it is.
func splitPassword(dsn string) (string, string) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.User == nil {
		return dsn, ""
	}
	password, ok := u.User.Password()
	if !ok {
		return dsn, ""
	}
	u.User = url.User(u.User.Username())
	return u.String(), password
}

// pgTool finds a PostgreSQL client program: on the PATH, else the newest
// of Debian's /usr/lib/postgresql/*/bin.
func pgTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	sort.Slice(matches, func(i, j int) bool { return pgVersion(matches[i]) > pgVersion(matches[j]) })
	if len(matches) > 0 {
		return matches[0], nil
	}
	return "", fmt.Errorf("%s not found: install PostgreSQL's client programs (apt-get install postgresql-client), of the server's major version or newer", name)
}
