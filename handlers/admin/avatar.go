package admin

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
)

// maxAvatarBytes is the largest avatar an owner may upload: a chat header
// shows it at 34 px, so 512 KiB is plenty.
const maxAvatarBytes = 512 << 10

// avatarTypes are the image types an avatar may have, as sniffed from its
// bytes (never SVG, which can carry script).
var avatarTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// avatarPath is the public path of the avatar of tenant slug.
func avatarPath(slug string) string { return "/avatars/" + slug }

// SaveAvatar answers POST /admin/settings/avatar: action=remove removes the
// uploaded picture; otherwise the multipart part "avatar" becomes the bot's
// picture, served by Parley, once its size and type are checked.
func (h *Settings) SaveAvatar(c echo.Context) error {
	a := dash.AdminFrom(c)
	ctx := c.Request().Context()
	prefix := h.BaseURL + avatarPath(a.Tenant.Slug)
	if c.QueryParam("action") == "remove" {
		if err := h.DB.RemoveAvatar(ctx, a.Tenant.ID, prefix); err != nil {
			return err
		}
		h.Sessions.Put(ctx, dash.SessFlash, "Avatar removed: the chat shows your assistant's initial.")
		return c.Redirect(http.StatusSeeOther, "/admin/settings/widget")
	}
	data, contentType, problem := readAvatar(c)
	if problem != "" {
		h.Sessions.Put(ctx, dash.SessFlashError, problem)
		return c.Redirect(http.StatusSeeOther, "/admin/settings/widget#avatar")
	}
	if _, err := h.DB.SaveAvatar(ctx, a.Tenant.ID, contentType, data, func(sha string) string { return prefix + "?v=" + sha[:16] }); err != nil {
		return err
	}
	h.Sessions.Put(ctx, dash.SessFlash, "Avatar uploaded: the chat shows it now.")
	return c.Redirect(http.StatusSeeOther, "/admin/settings/widget")
}

// readAvatar reads the uploaded picture, or says in the owner's words what
// is wrong with it.
func readAvatar(c echo.Context) ([]byte, string, string) {
	req := c.Request()
	req.Body = http.MaxBytesReader(c.Response(), req.Body, maxAvatarBytes+64<<10)
	tooBig := fmt.Sprintf("That picture is too large: at most %d KB. Save it smaller (a square of 256 pixels is plenty) and upload it again.", maxAvatarBytes>>10)
	fh, err := c.FormFile("avatar")
	var over *http.MaxBytesError
	switch {
	case errors.As(err, &over):
		return nil, "", tooBig
	case err != nil:
		return nil, "", "Choose a picture to upload first."
	case fh.Size > maxAvatarBytes:
		return nil, "", tooBig
	}
	f, err := fh.Open()
	if err != nil {
		return nil, "", "The upload could not be read; try again."
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxAvatarBytes+1))
	if err != nil || len(data) == 0 {
		return nil, "", "The upload could not be read; try again."
	}
	if len(data) > maxAvatarBytes {
		return nil, "", tooBig
	}
	typ := http.DetectContentType(data)
	if !avatarTypes[typ] {
		return nil, "", "That file is not a picture Parley can show: upload a PNG, JPEG, GIF or WebP image."
	}
	return data, typ, ""
}

// avatarMaxAge is how long a versioned avatar address may be cached: its
// content never changes (a new upload gets a new address).
const avatarMaxAge = "31536000"

// ShowAvatar answers GET /avatars/{slug}: the tenant's uploaded picture,
// public and cacheable (for a year, immutable, when the address carries
// the current version; five minutes otherwise), with an ETag.
func (h *Settings) ShowAvatar(c echo.Context) error {
	av, err := h.DB.AvatarBySlug(c.Request().Context(), c.Param("slug"))
	if parley.ErrorKind(err) == parley.KindNotFound {
		return c.NoContent(http.StatusNotFound)
	}
	if err != nil {
		return err
	}
	hdr := c.Response().Header()
	hdr.Set("Content-Security-Policy", "default-src 'none'")
	maxAge := "300"
	if v := c.QueryParam("v"); v != "" && strings.HasPrefix(av.SHA, v) && len(v) >= 16 {
		maxAge = avatarMaxAge + ", immutable"
	}
	if handlers.Fresh(c, maxAge, `"`+av.SHA[:24]+`"`) {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, av.ContentType, av.Data)
}
