// Package scripting is the dashboard's "Script the chat" page
// (/admin/script-chat): for whoever builds the tenant's site, how its own
// code drives the widget through window.Parley (open it from the site's
// own button, send a message, name a signed-in visitor, hear its events),
// with the tenant's embed code without the launcher and copyable examples.
package scripting

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/views"
)

// Scripting is the dashboard's "Script the chat" area.
type Scripting struct{ *handlers.Base }

// New builds the area over the Base web builds.
func New(b *handlers.Base) *Scripting { return &Scripting{b} }

// ShowScriptChatPage renders the page for the signed-in tenant.
func (h *Scripting) ShowScriptChatPage(c echo.Context) error {
	t := dash.AdminFrom(c).Tenant
	code := strings.TrimSuffix(h.SegmentEmbedCode(t, ""), ` async></script>`) + ` data-launcher="none" async></script>`
	return handlers.Render(c, http.StatusOK, views.ScriptChatPage(dash.Page(c, h.Sessions, "Script the chat", "script-chat"),
		views.ScriptChat{Embed: code}))
}
