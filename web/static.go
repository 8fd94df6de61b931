package web

import (
	"mime"
	"path"
	"sync"

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
	files := staticFiles()
	return func(c echo.Context) error {
		f, ok := files[c.Param("*")]
		if !ok {
			return echo.ErrNotFound
		}
		if c.QueryParam("v") == f.digest {
			c.Response().Header().Set(echo.HeaderCacheControl, "public, max-age=31536000, immutable")
		} else {
			c.Response().Header().Set(echo.HeaderCacheControl, "no-cache")
		}
		return f.body.Serve(c, f.ctype)
	}
}

// A servedFile is a static file as serveStatic answers it.
type servedFile struct {
	digest, ctype string
	body          *handlers.Compressible
}

// staticFiles are the static files by name, made once per process, so that
// each is gzipped once however many servers the process runs (the tests
// run hundreds).
var staticFiles = sync.OnceValue(func() map[string]servedFile {
	files := map[string]servedFile{}
	for name, f := range static.Files() {
		ctype := mime.TypeByExtension(path.Ext(name))
		if ctype == "" {
			ctype = echo.MIMEOctetStream
		}
		files[name] = servedFile{f.Digest, ctype, handlers.NewCompressible(f.Body, `"`+f.Digest+`"`)}
	}
	return files
})
