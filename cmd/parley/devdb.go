package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// devDB starts, or reuses, a private PostgreSQL cluster for make run and make
// test, and prints the URL of a database in it. Postgres refuses to run as
// root: as root the cluster belongs to the postgres user, and when that user
// cannot reach dir (a checkout under /root), the cluster lives in a temporary
// directory named after the checkout.
func devDB(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("dev-db", stderr)
	dir := fs.String("dir", ".data/pg", "cluster directory")
	port := fs.Int("port", 5438, "TCP port on 127.0.0.1 (not 5432, where a system cluster may run)")
	dbName := fs.String("db", "parley", "database to create if missing")
	recreate := fs.Bool("recreate", false, "drop the database first, so it starts empty")
	dropPrefix := fs.String("drop-prefix", "", "also drop every database whose name starts with this (leftover test databases)")
	fast := fs.Bool("fast", false, "trade durability for speed (tests): fsync and synchronous commit off")
	stop := fs.Bool("stop", false, "stop the cluster in --dir if it runs (make test, at its end), and print nothing")
	if err := fs.Parse(args); err != nil {
		return err
	}
	bindir, err := findPGBin()
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	asRoot := os.Geteuid() == 0
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return err
	}
	if asRoot && !postgresCanReach(filepath.Dir(abs)) {
		sum := sha256.Sum256([]byte(abs))
		checkout := filepath.Base(filepath.Dir(filepath.Dir(abs)))
		abs = filepath.Join(os.TempDir(), fmt.Sprintf("parley-%s-%x", checkout, sum[:4]), filepath.Base(abs))
		fmt.Fprintf(stderr, "dev-db: the postgres user cannot reach %s; using %s\n", *dir, abs)
	}
	pg := func(name string, args ...string) *exec.Cmd {
		bin := filepath.Join(bindir, name)
		if asRoot {
			return exec.CommandContext(ctx, "runuser", append([]string{"-u", "postgres", "--", bin}, args...)...)
		}
		return exec.CommandContext(ctx, bin, args...)
	}
	if *stop {
		if _, err := os.Stat(filepath.Join(abs, "PG_VERSION")); err != nil || pg("pg_ctl", "status", "-D", abs).Run() != nil {
			return nil // never started, or stopped already
		}
		if out, err := pg("pg_ctl", "stop", "-D", abs, "-m", "fast", "-w", "-t", "60").CombinedOutput(); err != nil {
			return fmt.Errorf("pg_ctl stop: %v\n%s", err, out)
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return err
	}
	if asRoot {
		if err := chownToPostgres(abs); err != nil {
			return err
		}
	}
	_, statErr := os.Stat(filepath.Join(abs, "PG_VERSION"))
	running := statErr == nil && pg("pg_ctl", "status", "-D", abs).Run() == nil
	if !running {
		if err := portFree(*port); err != nil {
			return err
		}
	}
	if statErr != nil {
		out, err := pg("initdb", "-D", abs, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale").CombinedOutput()
		if err != nil {
			return fmt.Errorf("initdb: %v\n%s", err, out)
		}
	}
	if !running {
		opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=300", *port, abs)
		if *fast {
			opts += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
		}
		out, err := pg("pg_ctl", "start", "-D", abs, "-l", filepath.Join(abs, "server.log"), "-w", "-t", "60", "-o", opts).CombinedOutput()
		if err != nil {
			log, _ := os.ReadFile(filepath.Join(abs, "server.log"))
			return fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, tail(string(log), 2000))
		}
	}
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", *port, *dbName)
	if err := ensureDatabase(ctx, *port, *dbName, *recreate, *dropPrefix); err != nil {
		return err
	}
	fmt.Fprintln(stdout, url)
	return nil
}

// portFree reports, as an error saying what to do, that another program
// listens on 127.0.0.1:port, where the cluster would start.
func portFree(port int) error {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return fmt.Errorf("port %d on 127.0.0.1 is taken by another program (another PostgreSQL?): stop it, or choose another port "+
			"with PARLEY_DEV_PG_PORT=5440 make run (PARLEY_TEST_PG_PORT for make test, --port for dev-db)", port)
	}
	return l.Close()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// findPGBin finds the directory of initdb and pg_ctl: PATH, then pg_config,
// then Debian's /usr/lib/postgresql/<version>/bin (newest first).
func findPGBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Dir(real), nil
		}
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dir := strings.TrimSpace(string(out))
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, nil
		}
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(matches, func(i, j int) bool { return pgVersion(matches[i]) > pgVersion(matches[j]) })
	if len(matches) > 0 {
		return filepath.Dir(matches[0]), nil
	}
	return "", errors.New("PostgreSQL server binaries (initdb, pg_ctl) not found: apt-get install postgresql")
}

func pgVersion(path string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(path))))
	return n
}

// postgresCanReach reports whether the postgres user can traverse dir.
func postgresCanReach(dir string) bool {
	return exec.Command("runuser", "-u", "postgres", "--", "test", "-x", dir).Run() == nil
}

func chownToPostgres(dir string) error {
	u, err := user.Lookup("postgres")
	if err != nil {
		return errors.New("running as root needs the postgres user (apt-get install postgresql creates it)")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return fmt.Errorf("giving %s to postgres: %w", dir, err)
	}
	return nil
}

func ensureDatabase(ctx context.Context, port int, name string, recreate bool, dropPrefix string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port))
	if err != nil {
		return fmt.Errorf("connecting to the dev cluster: %w", err)
	}
	defer conn.Close(ctx)
	var drop []string
	if recreate {
		drop = append(drop, name)
	}
	if dropPrefix != "" {
		rows, _ := conn.Query(ctx, `SELECT datname FROM pg_database WHERE starts_with(datname, $1)`, dropPrefix)
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("listing databases: %w", err)
		}
		drop = append(drop, names...)
	}
	for _, d := range drop {
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{d}.Sanitize()+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("dropping database %s: %w", d, err)
		}
	}
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			return fmt.Errorf("creating database %s: %w", name, err)
		}
	}
	return nil
}
