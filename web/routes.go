package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/static"
)

// routes is the whole HTTP surface of Parley, in one place.
func (s *Server) routes() {
	e, h := s.Echo, s.Handler
	e.Pre(middleware.RemoveTrailingSlash())
	e.Use(middleware.RequestID())
	e.Use(s.logRequests)
	e.Use(middleware.Recover())

	e.GET("/healthz", h.Healthz)
	e.GET("/readyz", h.Readyz)
	e.GET("/openapi.json", serveOpenAPI)
	e.StaticFS("/static", static.FS)

	// Management REST API.
	api := e.Group("/tenants/:slug", s.tenantAPI)
	api.GET("", h.ShowTenant, requireScope(auth.ScopeSettingsRead))
	api.PUT("", h.UpdateTenant, requireScope(auth.ScopeSettingsWrite))
	api.GET("/stats", h.ShowTenantStats, requireScope(auth.ScopeSettingsRead))

	// Admin dashboard.
	admin := e.Group("/admin", adminHeaders, echo.WrapMiddleware(s.Sessions.LoadAndSave), s.adminCSRF())
	admin.GET("/login", h.ShowLogin)
	admin.POST("/login", h.Login)
	signedIn := admin.Group("", h.RequireAdmin)
	signedIn.POST("/logout", h.Logout)
	signedIn.POST("/tenant", h.SwitchTenant)
	signedIn.GET("", h.ShowOverview)
	signedIn.GET("/settings", h.ShowSettings)
	signedIn.POST("/settings", h.SaveSettings)
	signedIn.POST("/settings/widget-key", h.SaveWidgetKey)
	signedIn.GET("/tokens", h.ShowTokens)
	signedIn.POST("/tokens", h.CreateToken)
	signedIn.POST("/tokens/:id/revoke", h.RevokeToken)

	e.GET("/", func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, "/admin") })
}
