package admin

import (
	"encoding/json"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/views"
)

// widgetPreview is the live preview of tenant t's widget for segment seg,
// beside the form formID; it chats through the test chat.
func (h *core) widgetPreview(c echo.Context, t parley.Tenant, seg parley.Segment, formID string) views.WidgetPreview {
	s := handlers.WidgetSettings(h.BaseURL, h.CaptchaScriptURL, t, seg)
	s.Endpoints = handlers.WidgetEndpointsJSON{} // it sends to the test chat only
	body, _ := json.Marshal(s)                   // plain data: cannot fail
	pv := views.WidgetPreview{Tenant: t.Slug, Settings: string(body), Form: formID, CSRF: dash.CSRFToken(c), SessionPrefix: testSessionPrefix}
	if seg.ID != "" && seg.IsActive {
		pv.Segment = seg.Slug
	}
	return pv
}

// embed is the embed code card of tenant t for a segment ("" for the
// default), with where and when the widget was last seen on its site.
func (h *core) embed(c echo.Context, t parley.Tenant, segment string) (views.Embed, error) {
	e := views.Embed{Code: h.SegmentEmbedCode(t, segment), Segment: segment}
	seen, err := h.DB.WidgetSeen(c.Request().Context(), t.ID)
	if err != nil || seen == nil {
		return e, err
	}
	e.SeenAt, e.SeenSite = seen.At.UTC().Format("2 January 2006, 15:04 UTC"), seen.Origin
	return e, nil
}
