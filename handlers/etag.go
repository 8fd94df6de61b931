package handlers

import (
	"context"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley/db"
)

// Entity tags of the settings-like resources (README, "Conditional
// updates"): the tenant, its MCP server, its embedding endpoint, its
// payment and calendar connectors, its voice setup and, for the operator,
// its plan. Their GET and PUT answers carry a strong ETag of the stored
// representation (db.TenantETag and the like); a PUT whose If-Match holds
// none of the current tags is refused with 412 PRECONDITION_FAILED and
// changes nothing, the check made by the store in the write's transaction.

// Conditional puts the request's If-Match in its context for the store's
// writes (db.WithIfMatch) and returns that context. No If-Match, an empty
// one or `*` leave the writes unconditional, as they were before ETags.
func Conditional(c echo.Context) context.Context {
	ctx := c.Request().Context()
	tags := ifMatchTags(c.Request().Header.Values("If-Match"))
	if tags == nil {
		return ctx
	}
	ctx = db.WithIfMatch(ctx, tags)
	c.SetRequest(c.Request().WithContext(ctx))
	return ctx
}

// ifMatchTags are the entity tags of If-Match header values, nil for none
// or `*`. A weak tag (W/"...") is kept as sent, so that it matches nothing
// (If-Match compares strongly); a tag sent without its quotes is quoted.
func ifMatchTags(values []string) []string {
	var tags []string
	for _, v := range values {
		for _, tag := range strings.Split(v, ",") {
			tag = strings.TrimSpace(tag)
			switch {
			case tag == "":
				continue
			case tag == "*":
				return nil
			case !strings.HasPrefix(tag, `"`) && !strings.HasPrefix(tag, "W/"):
				tag = `"` + tag + `"`
			}
			tags = append(tags, tag)
		}
	}
	return tags
}

// JSONWithETag answers status with body, and etag as its ETag unless it
// is "" (no stored representation, such as a connector never saved).
func JSONWithETag(c echo.Context, status int, etag string, body any) error {
	if etag != "" {
		c.Response().Header().Set("ETag", etag)
	}
	return c.JSON(status, body)
}

// ShowWithETag answers a GET whose whole answer etag covers: 304 Not
// Modified when If-None-Match holds it, else 200 with body and its ETag.
// (A GET whose answer also carries what moves without a write, such as
// usage counts, answers with JSONWithETag: a 304 would keep them stale.)
func ShowWithETag(c echo.Context, etag string, body any) error {
	if etag != "" && etagMatches(c.Request().Header.Get("If-None-Match"), etag) {
		c.Response().Header().Set("ETag", etag)
		return c.NoContent(http.StatusNotModified)
	}
	return JSONWithETag(c, http.StatusOK, etag, body)
}
