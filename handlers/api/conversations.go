package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/listing"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/resource"
)

// conversationScope reads the filters the list and the export share: from,
// to (dates in UTC), channel and segment (a slug or id of the tenant's;
// another is 400).
func (h *core) conversationScope(c echo.Context, f *listing.ConversationFilter) error {
	g, err := h.Manage.ConversationFilter(c.Request().Context(), handlers.TenantFrom(c).ID, handlers.ScopeQuery(c, time.UTC))
	if err != nil {
		return err
	}
	f.From, f.To, f.Channel, f.SegmentID = g.From, g.To, g.Channel, g.SegmentID
	return nil
}

// ListConversations answers GET /tenants/{slug}/conversations: the query's
// page, limit, scope (dates in UTC), status, visitorId, toolType and search
// (checked even when empty), answered {conversations, pagination}.
func (h *Leads) ListConversations(c echo.Context) error {
	l := parley.NewConversationListing()
	handlers.QueryInt(c, "page", &l.Page)
	handlers.QueryInt(c, "limit", &l.Limit)
	l.Scope = handlers.ScopeQuery(c, time.UTC)
	l.Status, l.VisitorID, l.ToolType = c.QueryParam("status"), c.QueryParam("visitorId"), c.QueryParam("toolType")
	if _, searched := c.QueryParams()["search"]; searched {
		l.Search = parley.Some(c.QueryParam("search"))
	}
	page, err := h.Manage.ListConversations(c.Request().Context(), handlers.TenantFrom(c).ID, l)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resource.NewConversationListJSON(l, page))
}

// ShowConversation answers GET /tenants/{slug}/conversations/{id}: the
// conversation with its messages, tool history and metadata, and for a
// voice conversation its call.
func (h *Leads) ShowConversation(c echo.Context) error {
	ctx := c.Request().Context()
	d, err := h.DB.ConversationDetail(ctx, handlers.TenantFrom(c).ID, c.Param("id"))
	if err != nil {
		return err
	}
	subs, err := h.DB.ConversationSubmissions(ctx, handlers.TenantFrom(c).ID, d.Conversation.ID)
	if err != nil {
		return err
	}
	out := resource.NewConversationDetailJSON(d, subs)
	if d.Conversation.Channel == parley.ChannelVoice {
		v, err := h.DB.VoiceCallOfConversation(ctx, handlers.TenantFrom(c).ID, d.Conversation.ID)
		if err != nil {
			return err
		}
		if v != nil {
			utc := parley.UTCPtr
			out.VoiceCall = &resource.VoiceCallJSON{CallID: v.CallID, Status: v.Status, CallerNumber: v.CallerNumber,
				StartedAt: utc(v.StartedAt), EndedAt: utc(v.EndedAt), EndedReason: v.EndedReason,
				DurationSeconds: v.DurationSeconds, Cost: v.Cost, Summary: v.Summary, Transcript: v.Transcript, HasRecording: v.HasRecording}
		}
	}
	return c.JSON(http.StatusOK, out)
}
