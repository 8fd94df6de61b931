package handlers

// The widget's embed code, which the REST API returns and the dashboard
// shows.

import (
	"html"

	"github.com/parley/parley"
)

// SegmentEmbedCode is the embed code selecting a segment ("" for the default).
func (h *Base) SegmentEmbedCode(t parley.Tenant, segment string) string {
	s := `<script src="` + html.EscapeString(h.CDNURL) + `/widget.js" data-tenant="` + html.EscapeString(t.Slug) + `"`
	if segment != "" {
		s += ` data-segment="` + html.EscapeString(segment) + `"`
	}
	if h.CDNURL != h.BaseURL {
		s += ` data-api="` + html.EscapeString(h.BaseURL) + `"`
	}
	if t.WidgetKey != nil {
		s += ` data-widget-key="` + html.EscapeString(*t.WidgetKey) + `"`
	}
	return s + ` async></script>`
}
