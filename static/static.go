// Package static holds the files served under /static: CSS, vendored htmx and
// the built widget (widget.js, a copy of widget/widget.js made by make widget,
// also served at /widget.js). Everything is embedded in the binary.
package static

import "embed"

// FS holds the static files.
//
//go:embed *.css *.js *.html
var FS embed.FS
