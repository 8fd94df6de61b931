// Package widget holds the embeddable chat widget: widget.js, plain
// JavaScript served as it is (no build step, so no copy of it to keep in
// step), and its test data.
package widget

import _ "embed"

// Script is widget.js, served at /widget.js.
//
//go:embed widget.js
var Script []byte
