package handlers

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"
)

// A Compressible is a fixed answer (a script, a stylesheet) served as it
// is or gzipped, as the client accepts: the gzipped copy is made once, on
// its first request, and has an entity tag of its own. The caller sets
// Cache-Control.
type Compressible struct {
	body, gzipped     []byte
	etag, gzippedETag string // quoted strong tags; the gzipped copy's ends in -gzip
	once              sync.Once
}

// NewCompressible serves body under the quoted strong entity tag etag.
func NewCompressible(body []byte, etag string) *Compressible {
	return &Compressible{body: body, etag: etag, gzippedETag: strings.TrimSuffix(etag, `"`) + `-gzip"`}
}

// Serve answers with the body as ctype, gzipped when the request accepts
// gzip (and it is smaller), or 304 when If-None-Match holds the tag of the
// copy it would send.
func (z *Compressible) Serve(c echo.Context, ctype string) error {
	h := c.Response().Header()
	h.Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
	body, etag, gzipped := z.body, z.etag, false
	if acceptsGzip(c.Request().Header.Get(echo.HeaderAcceptEncoding)) {
		z.once.Do(z.compress)
		if z.gzipped != nil {
			body, etag, gzipped = z.gzipped, z.gzippedETag, true
		}
	}
	h.Set("ETag", etag)
	if etagMatches(c.Request().Header.Get("If-None-Match"), etag) {
		return c.NoContent(http.StatusNotModified)
	}
	if gzipped {
		h.Set(echo.HeaderContentEncoding, "gzip")
	}
	return c.Blob(http.StatusOK, ctype, body)
}

// compress makes the gzipped copy, kept only when it is smaller.
func (z *Compressible) compress() {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // a valid level: cannot fail
	_, _ = zw.Write(z.body)                                  // to memory: cannot fail
	_ = zw.Close()
	if buf.Len() < len(z.body) {
		z.gzipped = buf.Bytes()
	}
}

// acceptsGzip reads Accept-Encoding: gzip (or x-gzip) with a weight above
// 0, or, when neither is named, * with a weight above 0.
func acceptsGzip(header string) bool {
	named, star := -1.0, -1.0 // the weights given; -1 when absent
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				}
			}
		}
		switch strings.ToLower(strings.TrimSpace(coding)) {
		case "gzip", "x-gzip":
			named = max(named, q)
		case "*":
			star = max(star, q)
		}
	}
	if named >= 0 {
		return named > 0
	}
	return star > 0
}

// ETagOf is a strong entity tag of body.
func ETagOf(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}

// Fresh sets a public answer's caching headers (max-age in seconds, and
// its ETag) and reports whether the copy the client holds is current: then
// the answer is 304 with no body.
func Fresh(c echo.Context, maxAge, etag string) bool {
	h := c.Response().Header()
	h.Set(echo.HeaderCacheControl, "public, max-age="+maxAge)
	h.Set("ETag", etag)
	return etagMatches(c.Request().Header.Get("If-None-Match"), etag)
}

// etagMatches applies If-None-Match (a list of entity tags, weak ones
// compared weakly, or *) to the current tag.
func etagMatches(header, etag string) bool {
	for _, tag := range strings.Split(header, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == "*" || tag == etag {
			return true
		}
	}
	return false
}
