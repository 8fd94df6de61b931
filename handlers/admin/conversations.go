package admin

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/listing"
	"github.com/parley/parley/db/visitors"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/handlers/admin/voice"
	"github.com/parley/parley/handlers/resource"
	"github.com/parley/parley/views"
)

// adminConversationsLimit is how many conversations a page of the inbox shows.
const adminConversationsLimit = 20

// maxInlineToolValue is the length past which a tool value is shown as a block.
const maxInlineToolValue = 80

// localTime is the dashboard's date-time in the tenant's time zone.
const localTime = "2006-01-02 15:04 MST"

// adminConversationListing reads the inbox's filter: the API's parameters
// (but the limit), dates in the tenant's time zone, an empty search box
// meaning no search, and the two check boxes.
func adminConversationListing(c echo.Context, loc *time.Location) parley.ConversationListing {
	l := parley.NewConversationListing()
	l.Limit = adminConversationsLimit
	handlers.QueryInt(c, "page", &l.Page)
	l.Scope = handlers.ScopeQuery(c, loc)
	l.Status = c.QueryParam("status")
	if search := strings.TrimSpace(c.QueryParam("search")); search != "" {
		l.Search = parley.Some(search)
	}
	l.HasFeedback, l.HasSubmission = c.QueryParam("feedback") != "", c.QueryParam("submission") != ""
	return l
}

func conversationRow(it listing.ConversationItem, loc *time.Location) views.ConversationRow {
	c := it.Conversation
	r := views.ConversationRow{ID: c.ID, Started: c.CreatedAt.In(loc).Format(localTime), Channel: c.Channel,
		Question: shortValue(handlers.Deref(c.FirstUserMessage)), Preview: handlers.Deref(resource.LastMessagePreview(it.Preview)), Messages: c.MessageCount,
		ToolCalls: c.ToolCallsCount, Positive: c.FeedbackPositive, Negative: c.FeedbackNegative, Escalated: c.Status == parley.StatusEscalated,
		Status: c.Status, Holder: handlers.Deref(c.Assignee)}
	if it.SegmentName != nil {
		r.Segment = *it.SegmentName
	}
	if r.Preview == handlers.Deref(c.FirstUserMessage) {
		r.Preview = ""
	}
	return r
}

// ShowConversationsPage is the inbox: on top, the conversations waiting for
// a person and those a person holds (refreshing themselves); below, the
// filters (checked by the API's operation) and a page of all conversations,
// most recently started first.
func (h *Leads) ShowConversationsPage(c echo.Context) error {
	ctx := c.Request().Context()
	t := dash.AdminFrom(c).Tenant
	loc := resource.TenantLocation(t)
	segments, err := h.segmentOptions(ctx, t.ID)
	if err != nil {
		return err
	}
	version, err := h.DB.InboxVersion(ctx, t.ID)
	if err != nil {
		return err
	}
	top, err := h.inboxTop(c, version)
	if err != nil {
		return err
	}
	v := views.ConversationsView{Top: top, Segments: segments, TimeZone: loc.String(), Filter: views.ConversationsFilter{
		Channel: c.QueryParam("channel"), Segment: c.QueryParam("segment"), Status: c.QueryParam("status"),
		From: c.QueryParam("from"), To: c.QueryParam("to"), Search: strings.TrimSpace(c.QueryParam("search")),
		Feedback: flag(c.QueryParam("feedback")), Submission: flag(c.QueryParam("submission")),
	}}
	status := http.StatusOK
	l := adminConversationListing(c, loc)
	page, err := h.Manage.ListConversations(ctx, t.ID, l)
	if err != nil {
		var ok bool
		if v.Errors, status, ok = dash.FailedForm(err); !ok {
			return err
		}
		for k := range v.Errors {
			v.Errors[k] = err.Error() // the API's own message, which names the parameter
		}
	} else {
		v.Page, v.Total, v.TotalCapped, v.Pages = l.Page, page.Total, page.TotalCapped, (page.Total+l.Limit-1)/l.Limit
		for _, it := range page.Conversations {
			v.Rows = append(v.Rows, conversationRow(it, loc))
		}
	}
	return handlers.Render(c, status, views.ConversationsPage(dash.Page(c, h.Sessions, "Conversations", "conversations"), v))
}

// flag is a ticked check box's value kept across pages: "1", or "" when not ticked.
func flag(v string) string {
	if v == "" {
		return ""
	}
	return "1"
}

// toolFields shows a tool call's input or result: an object's members in
// their stored order, anything else as one value.
func toolFields(raw json.RawMessage) []views.ToolField {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "{}" {
		return nil
	}
	var fields []views.ToolField
	if raw[0] == '{' {
		for _, f := range inputFields(raw) {
			fields = append(fields, toolField(f.Key, f.Value))
		}
		return fields
	}
	return []views.ToolField{toolField("value", fieldText(raw))}
}

func toolField(key, value string) views.ToolField {
	return views.ToolField{Key: key, Value: value,
		Long: strings.Contains(value, "\n") || utf8.RuneCountInString(value) > maxInlineToolValue}
}

// transcript puts the tool calls among the messages. A turn's reply is
// stored before its tool history (SaveTurn), so a call belongs to the last
// answer stored before it and is shown before that answer, where it ran; a
// call of a turn without an answer comes before the next visitor's message.
// A call is named as the owner named the tool (its display name), else by
// the function the model called.
func transcript(msgs []parley.Message, calls []parley.ToolCall, loc *time.Location) []views.TranscriptItem {
	items := make([]views.TranscriptItem, 0, len(msgs)+len(calls))
	next := 0
	asked := false // a visitor's message came before: an answer can be improved
	flushBefore := func(end time.Time) {
		for ; next < len(calls) && (end.IsZero() || calls[next].Timestamp.Before(end)); next++ {
			tc := calls[next]
			items = append(items, views.TranscriptItem{Role: "tool", At: tc.Timestamp.In(loc).Format(localTime), ToolName: handlers.NonBlankOr(handlers.Deref(tc.ToolDisplayName), tc.ToolName),
				ToolType: tc.ToolType, Input: toolFields(tc.Input), Result: toolFields(tc.Result),
				NoResult: len(tc.Result) == 0 || string(tc.Result) == "null"})
		}
	}
	for i, m := range msgs {
		switch {
		case m.Role == "user":
			flushBefore(m.CreatedAt)
		case i+1 < len(msgs):
			flushBefore(msgs[i+1].CreatedAt)
		default:
			flushBefore(time.Time{})
		}
		it := views.TranscriptItem{Role: m.Role, Content: m.Content, At: m.CreatedAt.In(loc).Format(localTime), AuthorName: handlers.Deref(m.AuthorName),
			ID: m.ID, Improvable: m.Role == "assistant" && asked}
		asked = asked || m.Role == "user"
		for _, k := range m.Knowledge {
			it.Knowledge = append(it.Knowledge, views.KnowledgeUsed{ID: k.ID, Title: k.Title, Summarized: k.Summarized, Cited: k.Cited})
		}
		if m.Feedback != nil {
			it.Feedback = *m.Feedback
		}
		items = append(items, it)
	}
	flushBefore(time.Time{})
	return items
}

// visitorLabel names a visitor for the owner: email, name, the email given
// in a lead form, their own id, else ours.
func visitorLabel(v visitors.VisitorDetail) string {
	for _, s := range []*string{v.Email, v.DisplayName, v.ContactEmail, v.ExternalID} {
		if handlers.Deref(s) != "" {
			return *s
		}
	}
	return v.ID
}

// ShowConversationPage renders one of the tenant's conversations: who,
// where, a phone call's report (voice), the submissions it produced, and,
// refreshing itself, its state with a person's buttons (take over, hand
// back, close) and the transcript with the tools run; then the reply box.
// Another tenant's conversation is the dashboard's 404.
func (h *Leads) ShowConversationPage(c echo.Context) error {
	return h.renderConversationPage(c, http.StatusOK, replyForm(c, c.Param("id")))
}

// renderConversationPage renders the conversation page with status and
// the reply box as given (a refused reply keeps its text).
func (h *Leads) renderConversationPage(c echo.Context, status int, reply views.ReplyForm) error {
	ctx := c.Request().Context()
	t := dash.AdminFrom(c).Tenant
	loc := resource.TenantLocation(t)
	d, err := h.DB.ConversationDetail(ctx, t.ID, c.Param("id"))
	if err != nil {
		return err
	}
	conv := d.Conversation
	typing, err := h.visitorTyping(c, conv)
	if err != nil {
		return err
	}
	v := views.ConversationDetail{ID: conv.ID, Started: conv.CreatedAt.In(loc).Format(localTime), Channel: conv.Channel, Status: conv.Status,
		VisitorType: conv.VisitorType, Segment: handlers.Deref(d.SegmentName), PageURL: handlers.Deref(conv.PageURL), Referrer: conv.Metadata.Referrer,
		Locale: handlers.Deref(conv.Locale), AgentModel: handlers.Deref(conv.AgentModel), Positive: conv.FeedbackPositive, Negative: conv.FeedbackNegative,
		Live: conversationLive(c, d, typing, loc), Reply: reply}
	if v.PageURL == "" {
		v.PageURL = conv.Metadata.Page
	}
	if conv.VisitorID != nil {
		vis, err := h.DB.VisitorDetail(ctx, t.ID, *conv.VisitorID)
		switch {
		case err == nil:
			v.VisitorID, v.VisitorLabel = vis.ID, visitorLabel(vis)
		case parley.ErrorKind(err) != parley.KindNotFound: // erased meanwhile: shown as anonymous
			return err
		}
	}
	if conv.Channel == parley.ChannelVoice {
		v.Voice = true
		call, err := h.DB.VoiceCallOfConversation(ctx, t.ID, conv.ID)
		if err != nil {
			return err
		}
		if call != nil {
			row := voice.CallRow(*call, loc)
			v.Call = &row
		}
	}
	subs, err := h.DB.ConversationSubmissions(ctx, t.ID, conv.ID)
	if err != nil {
		return err
	}
	for _, s := range subs {
		v.Submissions = append(v.Submissions, views.ConversationSubmission{ID: s.ID, ToolName: s.ToolName, ToolType: s.ToolType,
			Summary: submissionSummary(inputFields(s.Input)), Status: s.Status, CreatedAt: s.CreatedAt.In(loc).Format(localTime)})
	}
	return handlers.Render(c, status, views.ConversationPage(dash.Page(c, h.Sessions, "Conversation", "conversations"), v))
}
