package web

import (
	"mime"
	"net/http"
	"path"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley/handlers"
	"github.com/parley/parley/static"
)

// serveStatic answers /static/<name>. The dashboard links its files by
// static.Path, with the content's digest as v: such an answer may be kept a
// year without asking again, since the next release's file has another
// address. Any other request (an old digest, none, the demo page) must be
// revalidated, by the ETag, which costs a 304 and no body.
func serveStatic(c echo.Context) error {
	name := c.Param("*")
	f, ok := static.Open(name)
	if !ok {
		return echo.ErrNotFound
	}
	h := c.Response().Header()
	etag := `"` + f.Digest + `"`
	h.Set("ETag", etag)
	if c.QueryParam("v") == f.Digest {
		h.Set(echo.HeaderCacheControl, "public, max-age=31536000, immutable")
	} else {
		h.Set(echo.HeaderCacheControl, "no-cache")
	}
	if handlers.ETagMatches(c.Request().Header.Get("If-None-Match"), etag) {
		return c.NoContent(http.StatusNotModified)
	}
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" {
		ctype = echo.MIMEOctetStream
	}
	return c.Blob(http.StatusOK, ctype, f.Body)
}
