package web

import (
	"mime"
	"path"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley/handlers"
	"github.com/parley/parley/static"
)

// serveStatic answers /static/<name>. The dashboard links its files by
// static.Path, with the content's digest as v: such an answer may be kept a
// year without asking again, since the next release's file has another
// address. Any other request (an old digest, none, the demo page) must be
// revalidated, by the ETag, which costs a 304 and no body. Either is
// gzipped for a browser that takes it (handlers.Compressible, each file
// compressed on its first such request).
func serveStatic() echo.HandlerFunc {
	files := map[string]*handlers.Compressible{}
	for _, name := range static.Names() {
		f, _ := static.Open(name)
		files[name] = handlers.NewCompressible(f.Body, `"`+f.Digest+`"`)
	}
	return func(c echo.Context) error {
		name := c.Param("*")
		z, ok := files[name]
		if !ok {
			return echo.ErrNotFound
		}
		f, _ := static.Open(name)
		if c.QueryParam("v") == f.Digest {
			c.Response().Header().Set(echo.HeaderCacheControl, "public, max-age=31536000, immutable")
		} else {
			c.Response().Header().Set(echo.HeaderCacheControl, "no-cache")
		}
		ctype := mime.TypeByExtension(path.Ext(name))
		if ctype == "" {
			ctype = echo.MIMEOctetStream
		}
		return z.Serve(c, ctype)
	}
}
