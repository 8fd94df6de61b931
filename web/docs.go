package web

import (
	"html/template"
	"net/http"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley/static"
)

// DocsPath is the API reference: the served OpenAPI document rendered in
// the browser (static/docs.js), with "Try it out" against this instance.
const DocsPath = "/docs"

// DocsAliases are the other addresses integrators try for documentation;
// each redirects to DocsPath.
var DocsAliases = []string{"/api/docs", "/api-docs", "/reference"}

// docsCSP is the reference page's Content-Security-Policy: the dashboard's,
// with the requests "Try it out" makes (to this origin only) spelled out.
const docsCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

var docsTemplate = template.Must(template.New("docs").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Parley API reference</title>
<link rel="stylesheet" href="{{.SwaggerCSS}}">
<link rel="stylesheet" href="{{.DocsCSS}}">
</head>
<body>
<header class="docs-head">
<h1>Parley API reference</h1>
<nav aria-label="Documentation">
<a href="/openapi.json">OpenAPI document</a>
<a href="/admin/tokens">Your API tokens</a>
<a href="/admin">Dashboard</a>
</nav>
</header>
<main id="docs" aria-busy="true">
<p class="docs-loading">Loading the reference…</p>
<noscript><p class="docs-error">The reference needs JavaScript. The same description is at <a href="/openapi.json">/openapi.json</a>.</p></noscript>
</main>
<script src="{{.SwaggerJS}}"></script>
<script src="{{.DocsJS}}"></script>
</body>
</html>
`))

// docsPage is the reference page, the same for every request: the static
// files at their digests, so a browser keeps them until a release changes
// them.
var docsPage = sync.OnceValue(func() []byte {
	var b strings.Builder
	err := docsTemplate.Execute(&b, map[string]string{
		"SwaggerCSS": static.Path("swagger-ui.css"), "DocsCSS": static.Path("docs.css"),
		"SwaggerJS": static.Path("swagger-ui-bundle.js"), "DocsJS": static.Path("docs.js"),
	})
	if err != nil {
		panic(err)
	}
	return []byte(b.String())
})

// showDocs answers the API reference page.
func showDocs(c echo.Context) error {
	h := c.Response().Header()
	h.Set("Content-Security-Policy", docsCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set(echo.HeaderCacheControl, "no-cache")
	return c.HTMLBlob(http.StatusOK, docsPage())
}

// redirectToDocs sends a documentation address integrators try to the
// reference.
func redirectToDocs(c echo.Context) error {
	return c.Redirect(http.StatusMovedPermanently, DocsPath)
}
