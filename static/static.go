// Package static holds the files served under /static: CSS, vendored htmx and
// the demo page of the widget. Everything is embedded in the binary.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
)

// FS holds the static files.
//
//go:embed *.css *.js *.html
var FS embed.FS

// A File is one static file and the digest of its content.
type File struct {
	Body   []byte
	Digest string // 16 hex digits of the body's SHA-256
}

var files = func() map[string]File {
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
		m[name] = File{Body: body, Digest: hex.EncodeToString(sum[:8])}
	}
	return m
}()

// Names are the static files' names, sorted.
func Names() []string {
	names, _ := fs.Glob(FS, "*") // a valid pattern: cannot fail
	return names
}

// Open gives the static file of that name.
func Open(name string) (File, bool) {
	f, ok := files[name]
	return f, ok
}

// Path is the address of the static file of that name, with its content's
// digest in the query: an address that changes when the file does, so a
// browser may keep the file for as long as it likes (see web's serveStatic).
// A name with no file gets its address alone, which answers 404.
func Path(name string) string {
	f, ok := files[name]
	if !ok {
		return "/static/" + name
	}
	return "/static/" + name + "?v=" + f.Digest
}
