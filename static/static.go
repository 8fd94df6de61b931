// Package static holds the files served under /static: CSS, vendored htmx and
// the demo page of the widget. Everything is embedded in the binary.
package static

import "embed"

// FS holds the static files.
//
//go:embed *.css *.js *.html
var FS embed.FS
