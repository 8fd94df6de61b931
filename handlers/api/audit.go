package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/handlers"
)

// Audit is the REST API's audit log.
type Audit struct{ core }

type auditActorJSON struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

type auditEntryJSON struct {
	ID          int64          `json:"id"`
	At          time.Time      `json:"at"`
	Actor       auditActorJSON `json:"actor"`
	Action      string         `json:"action"`
	Description string         `json:"description"`
	Target      string         `json:"target"`
	TargetID    string         `json:"targetId"`
	Denied      bool           `json:"denied"`
	Address     string         `json:"address"`
	Details     map[string]any `json:"details"`
}

type auditPaginationJSON struct {
	Limit      int     `json:"limit"`
	NextCursor *string `json:"nextCursor"`
}

// auditListJSON is what GET /tenants/{slug}/audit-log answers.
type auditListJSON struct {
	Entries    []auditEntryJSON    `json:"entries"`
	Pagination auditPaginationJSON `json:"pagination"`
}

// ListAuditLog answers GET /tenants/{slug}/audit-log: the tenant's audit
// log, newest first, filtered by the query (handlers.CheckAuditFilter;
// dates in UTC), a page at a time: pagination.nextCursor, given back as
// cursor, reads the next page, and is null on the last.
func (h *Audit) ListAuditLog(c echo.Context) error {
	f, err := handlers.CheckAuditFilter(c.QueryParams(), time.UTC)
	if err != nil {
		return err
	}
	page, err := h.DB.ListAudit(c.Request().Context(), handlers.TenantFrom(c).ID, f)
	if err != nil {
		return err
	}
	out := auditListJSON{Entries: make([]auditEntryJSON, len(page.Entries)), Pagination: auditPaginationJSON{Limit: f.Limit}}
	for i, e := range page.Entries {
		details := e.Details
		if details == nil {
			details = map[string]any{}
		}
		out.Entries[i] = auditEntryJSON{ID: e.ID, At: e.At.UTC(), Actor: auditActorJSON(e.Actor), Action: e.Action,
			Description: audit.Words[e.Action], Target: e.Target, TargetID: e.TargetID, Denied: e.Denied, Address: e.Address,
			Details: details}
	}
	if page.Next != nil {
		next := page.Next.String()
		out.Pagination.NextCursor = &next
	}
	return c.JSON(http.StatusOK, out)
}
