// Package static holds the files served under /static: CSS, vendored htmx,
// the API reference's renderer (Swagger UI, THIRD_PARTY.md) and
// the demo page of the widget. Everything is embedded in the binary.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"maps"
)

// FS holds the static files.
//
//go:embed *.css *.js *.html
var FS embed.FS

// A File is one static file, the digest of its content and the address
// that carries it (Path).
type File struct {
	Body   []byte
	Digest string // 16 hex digits of the body's SHA-256
	Path   string // /static/<name>?v=<digest>
}

// all is every static file, by name, read and hashed once.
var all = func() map[string]File {
	m := map[string]File{}
	names, err := fs.Glob(FS, "*")
	if err != nil {
		panic(err)
	}
	for _, name := range names {
		body, err := FS.ReadFile(name)
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(body)
		digest := hex.EncodeToString(sum[:8])
		m[name] = File{Body: body, Digest: digest, Path: "/static/" + name + "?v=" + digest}
	}
	return m
}()

// Files are the static files, by name.
func Files() map[string]File {
	return maps.Clone(all)
}

// Path is the address of the static file of that name, with its content's
// digest in the query: an address that changes when the file does, so a
// browser may keep the file for as long as it likes (see web's serveStatic).
// A name with no file gets its address alone, which answers 404.
func Path(name string) string {
	if f, ok := all[name]; ok {
		return f.Path
	}
	return "/static/" + name
}
