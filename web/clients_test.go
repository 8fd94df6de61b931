package web_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestClientsGenerated: the typed clients committed under clients/ (README,
// "Typed clients") were generated from the document as it is, by the
// generators as pinned, and not edited since. make clients (and make
// openapi) writes clients/SHA256SUMS, the digests of the generation's inputs
// and outputs; a file whose digest differs fails here. Generating them again
// needs the generators, which make test does not build: the digests make
// the check cheap.
func TestClientsGenerated(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../clients/SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for line := range strings.Lines(string(raw)) {
		sum, name, ok := strings.Cut(strings.TrimSpace(line), "  ")
		if !ok {
			t.Fatalf("clients/SHA256SUMS: %q is not sha256sum's line", line)
		}
		names = append(names, name)
		content, err := os.ReadFile(filepath.Join("..", name))
		if err != nil {
			t.Errorf("%s: %v (run make clients)", name, err)
			continue
		}
		digest := sha256.Sum256(content)
		if hex.EncodeToString(digest[:]) != sum {
			t.Errorf("%s changed since the clients were generated: run make clients (make openapi runs it) and commit what it writes", name)
		}
	}
	for _, want := range []string{"web/openapi.json", "clients/parleyclient/client.gen.go", "clients/typescript/schema.d.ts"} {
		if !slices.Contains(names, want) {
			t.Errorf("clients/SHA256SUMS does not name %s: run make clients", want)
		}
	}
}
