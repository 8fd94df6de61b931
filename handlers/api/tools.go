package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
	"github.com/parley/parley/handlers/resource"
)

// ListTools answers GET /tenants/{slug}/tools: a bare array, lowest position first.
func (h *Tools) ListTools(c echo.Context) error {
	tools, err := h.Manage.ListTools(c.Request().Context(), handlers.TenantFrom(c).ID)
	if err != nil {
		return err
	}
	out := make([]resource.ToolJSON, len(tools))
	for i, t := range tools {
		out[i] = resource.NewToolJSON(t)
	}
	return c.JSON(http.StatusOK, out)
}

// ShowTool answers GET /tenants/{slug}/tools/{id}.
func (h *Tools) ShowTool(c echo.Context) error {
	t, err := h.Manage.Tool(c.Request().Context(), handlers.TenantFrom(c).ID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resource.NewToolJSON(t))
}

// CreateTool answers POST /tenants/{slug}/tools: only user-configurable types.
func (h *Tools) CreateTool(c echo.Context) error {
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	t, err := h.Manage.CreateTool(c.Request().Context(), handlers.TenantFrom(c).ID, resource.ToolInputOf(raw))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, resource.NewToolJSON(t))
}

// UpdateTool answers PATCH /tenants/{slug}/tools/{id}: any subset of the create fields.
func (h *Tools) UpdateTool(c echo.Context) error {
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	t, err := resource.UpdateTool(c.Request().Context(), h.Manage, handlers.TenantFrom(c).ID, c.Param("id"), raw)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resource.NewToolJSON(t))
}

// DeleteTool answers DELETE /tenants/{slug}/tools/{id}.
func (h *Tools) DeleteTool(c echo.Context) error {
	return handlers.DeleteOne(c, "id", h.Manage.DeleteTool)
}
