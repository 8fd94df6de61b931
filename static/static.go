// Package static holds the files served under /static: CSS, vendored htmx and,
// later, the built widget. Everything is embedded in the binary.
package static

import "embed"

// FS holds the static files.
//
//go:embed *.css *.js
var FS embed.FS
