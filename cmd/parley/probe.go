package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// probe asks the server on this machine whether it is ready (GET
// /readyz on the port of PARLEY_ADDR, or --url), for a container's
// HEALTHCHECK where there is no curl: exit 0 when it answers 200.
func probe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("probe", stderr)
	target := fs.String("url", "", "the address to ask (default http://127.0.0.1:<PARLEY_ADDR's port>/readyz)")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to wait for the answer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *target == "" {
		addr := strings.TrimSpace(os.Getenv("PARLEY_ADDR"))
		if addr == "" {
			addr = ":8080"
		}
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			return fmt.Errorf("PARLEY_ADDR: %q must be host:port or :port", addr)
		}
		*target = "http://127.0.0.1:" + port + "/readyz"
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *target, nil)
	if err != nil {
		return fmt.Errorf("--url: %v", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("not ready: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("not ready: %s answered %d %s", *target, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	fmt.Fprintln(stdout, "ready")
	return nil
}
