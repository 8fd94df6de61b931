package admin

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db/listing"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/handlers/resource"
	"github.com/parley/parley/manage"
	"github.com/parley/parley/views"
)

// A person's part in a conversation, from the dashboard: the inbox's top
// section (the conversations waiting for a person and those held by one),
// the number waiting beside Conversations in the navigation, taking a
// conversation over, replying to the visitor, handing it back, closing it.
//
// Every open page learns of changes by polling small fragments (htmx's
// hx-trigger "every 2s", the navigation's every 5 s), each carrying the
// version of what it shows: a poll that finds the same version is answered
// 204 No Content after one read of its own, beside the signed-in user's
// (BENCHMARKS.md), which htmx does not swap. Polling reads the database, so it works whichever instance answers.

// ReadSession loads the dashboard's session for the polls of open pages
// without writing it back. scs's LoadAndSave writes every request's session
// again to move its idle timeout: a poll every 2 seconds would cost a
// committed write each, and would keep a session alive for as long as a
// tab stays open, which the idle timeout is there to prevent. A poll is not
// the owner's activity. Signed out (the session ended meanwhile), htmx is
// sent to the sign-in page, which brings the owner back to the page that
// polled.
func (h *Account) ReadSession(next echo.HandlerFunc) echo.HandlerFunc {
	sessions := h.Sessions
	return func(c echo.Context) error {
		token := ""
		if ck, err := c.Request().Cookie(sessions.Cookie.Name); err == nil {
			token = ck.Value
		}
		ctx, err := sessions.Load(c.Request().Context(), token)
		if err != nil {
			return fmt.Errorf("loading the session: %w", err)
		}
		c.SetRequest(c.Request().WithContext(ctx))
		c.Set(dash.ReadOnlySession, true)
		if sessions.GetString(ctx, dash.SessUserID) == "" {
			if !dash.IsHTMX(c) {
				return c.Redirect(http.StatusSeeOther, "/admin/login")
			}
			target := "/admin/login"
			if u, err := url.Parse(c.Request().Header.Get("HX-Current-URL")); err == nil && strings.HasPrefix(u.Path, "/admin/") {
				target += "?next=" + url.QueryEscape(u.RequestURI())
			}
			c.Response().Header().Set("HX-Redirect", target)
			return c.NoContent(http.StatusUnauthorized)
		}
		return next(c)
	}
}

// personOf is the signed-in user as the holder of a conversation: the name
// the visitor is shown is the part of their email before the '@'.
func personOf(c echo.Context) *parley.Holder {
	u := dash.AdminFrom(c).User
	name, _, _ := strings.Cut(u.Email, "@")
	name = parley.Clip(strings.TrimSpace(name), manage.MaxPersonName)
	if name == "" {
		name = "Support"
	}
	id := u.ID
	return &parley.Holder{UserID: &id, Name: name}
}

// inboxRow is a conversation of the inbox's top section.
func inboxRow(it listing.InboxItem, loc *time.Location) views.ConversationRow {
	c := it.Conversation
	r := views.ConversationRow{ID: c.ID, Started: c.CreatedAt.In(loc).Format(localTime), Channel: c.Channel,
		Question: shortValue(handlers.Deref(c.FirstUserMessage)), Preview: handlers.Deref(resource.LastMessagePreview(it.LastMessage)),
		Messages: c.MessageCount, Escalated: c.Status == parley.StatusEscalated, Status: c.Status, Holder: handlers.Deref(c.Assignee),
		Unanswered: it.Unanswered}
	if r.Preview == handlers.Deref(c.FirstUserMessage) {
		r.Preview = ""
	}
	return r
}

// inboxTop reads the inbox's top section, at version v.
func (h *Leads) inboxTop(c echo.Context, v listing.InboxVersion) (views.InboxTop, error) {
	t := dash.AdminFrom(c).Tenant
	items, err := h.DB.InboxAttention(c.Request().Context(), t.ID)
	if err != nil {
		return views.InboxTop{}, err
	}
	loc := resource.TenantLocation(t)
	top := views.InboxTop{Version: v.Key()}
	for _, it := range items {
		if it.Status == parley.StatusEscalated {
			top.Waiting = append(top.Waiting, inboxRow(it, loc))
		} else {
			top.Held = append(top.Held, inboxRow(it, loc))
		}
	}
	return top, nil
}

// ShowInboxUpdates is the inbox's top section when it changed since the
// version the page shows (the query's v), else 204 No Content.
func (h *Leads) ShowInboxUpdates(c echo.Context) error {
	v, err := h.DB.InboxVersion(c.Request().Context(), dash.AdminFrom(c).Tenant.ID)
	if err != nil {
		return err
	}
	if v.Key() == c.QueryParam("v") {
		return c.NoContent(http.StatusNoContent)
	}
	top, err := h.inboxTop(c, v)
	if err != nil {
		return err
	}
	return handlers.Render(c, http.StatusOK, views.InboxTopSection(top))
}

// ShowWaitingCount is the navigation's number of conversations waiting for
// a person when it changed since the version the page shows, else 204 No
// Content.
func (h *Leads) ShowWaitingCount(c echo.Context) error {
	v, err := h.DB.InboxVersion(c.Request().Context(), dash.AdminFrom(c).Tenant.ID)
	if err != nil {
		return err
	}
	var latest int64
	if !v.LatestEscalation.IsZero() {
		latest = v.LatestEscalation.UnixMilli()
	}
	version := fmt.Sprintf("%d-%d", v.Waiting, latest)
	if version == c.QueryParam("v") {
		return c.NoContent(http.StatusNoContent)
	}
	return handlers.Render(c, http.StatusOK, views.NavWaiting(v.Waiting, latest, version))
}

// liveVersion identifies what the conversation page's live section shows:
// anything it shows changes one of these (a message, a tool run and a vote
// change the counts, a move the state; each sets updated_at), and whether
// the visitor is typing.
func liveVersion(c parley.Conversation, typing bool) string {
	v := fmt.Sprintf("%s-%d-%d-%d-%d-%d", c.Status, c.MessageCount, c.ToolCallsCount, c.FeedbackPositive, c.FeedbackNegative, c.UpdatedAt.UnixMicro())
	if typing {
		v += "-typing"
	}
	return v
}

// conversationLive is the live section of the conversation page; typing:
// the visitor is typing.
func conversationLive(c echo.Context, d listing.ConversationDetail, typing bool, loc *time.Location) views.ConversationLive {
	conv := d.Conversation
	l := views.ConversationLive{ID: conv.ID, Status: conv.Status, CSRF: dash.CSRFToken(c), Holder: handlers.Deref(conv.Assignee),
		Takeover: conv.Channel != parley.ChannelVoice, MessageCount: max(conv.MessageCount, len(d.Messages)),
		Items: transcript(d.Messages, d.ToolHistory, loc), Typing: typing, Version: liveVersion(conv, typing),
		CanImprove: auth.RoleHolds(dash.AdminFrom(c).Role, auth.RoleAdmin)}
	if conv.Status == parley.StatusHuman && conv.AssignedUserID != nil {
		l.Mine = *conv.AssignedUserID == dash.AdminFrom(c).User.ID
	}
	switch {
	case conv.Status == parley.StatusHuman && conv.TakenAt != nil:
		l.Since = conv.TakenAt.In(loc).Format(localTime)
	case conv.Status == parley.StatusEscalated && conv.EscalatedAt != nil:
		l.Since = conv.EscalatedAt.In(loc).Format(localTime)
	}
	return l
}

// replyForm is the reply box of the conversation, empty.
func replyForm(c echo.Context, id string) views.ReplyForm {
	return views.ReplyForm{ID: id, CSRF: dash.CSRFToken(c), Name: personOf(c).Name, Max: manage.MaxReplyMessage}
}

// ShowConversationUpdates is the conversation page's live section (and
// the typing line out of band) when the conversation changed since the
// version the page shows, else 204 No Content. Another tenant's
// conversation is 404.
func (h *Leads) ShowConversationUpdates(c echo.Context) error {
	ctx := c.Request().Context()
	t := dash.AdminFrom(c).Tenant
	conv, err := h.DB.Conversation(ctx, t.ID, c.Param("id"))
	if err != nil {
		return err
	}
	typing, err := h.visitorTyping(c, conv)
	if err != nil {
		return err
	}
	if liveVersion(conv, typing) == c.QueryParam("v") {
		return c.NoContent(http.StatusNoContent)
	}
	l, err := h.liveNow(c)
	if err != nil {
		return err
	}
	return handlers.Render(c, http.StatusOK, views.LiveFragment(l))
}

// visitorTyping tells whether the visitor of conv is typing; only asked of
// a conversation a person awaits or holds (the widget signals nothing
// else).
func (h *Leads) visitorTyping(c echo.Context, conv parley.Conversation) (bool, error) {
	if conv.Status != parley.StatusEscalated && conv.Status != parley.StatusHuman {
		return false, nil
	}
	return h.DB.VisitorTyping(c.Request().Context(), conv.TenantID, conv.ID)
}

// liveNow reads the conversation's live section as it is now.
func (h *Leads) liveNow(c echo.Context) (views.ConversationLive, error) {
	t := dash.AdminFrom(c).Tenant
	d, err := h.DB.ConversationDetail(c.Request().Context(), t.ID, c.Param("id"))
	if err != nil {
		return views.ConversationLive{}, err
	}
	typing, err := h.visitorTyping(c, d.Conversation)
	if err != nil {
		return views.ConversationLive{}, err
	}
	return conversationLive(c, d, typing, resource.TenantLocation(t)), nil
}

// SignalTyping answers POST /admin/conversations/{id}/typing: the
// signed-in user is typing in the reply box (the page sends it at most
// every db.TypingEvery while they type), which the visitor's widget shows
// through its stream. It is kept only while the user holds the
// conversation; otherwise (nobody holds it yet, another person does, it is
// closed) it is dropped: a reply is what takes a conversation over. The
// answer is 204 No Content either way; another tenant's conversation is
// 404. It runs with the polls (no write of the session).
func (h *Presence) SignalTyping(c echo.Context) error {
	t := dash.AdminFrom(c).Tenant
	if _, err := h.DB.SignalPersonTyping(c.Request().Context(), t.ID, c.Param("id"), *personOf(c)); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// moveDone is the flash after a move of a conversation.
var moveDone = map[string]string{
	parley.StatusHuman:  "You took the conversation over: the assistant no longer answers it.",
	parley.StatusBot:    "The assistant answers the conversation again.",
	parley.StatusClosed: "The conversation is closed.",
}

// SaveConversationState takes the conversation over (status HUMAN), hands
// it back to the assistant (BOT) or closes it (CLOSED), as the signed-in
// user. A conversation another person took is not an error page: htmx gets
// the live section with a notice naming the holder (409), a plain form the
// conversation page with it as a flash.
func (h *Leads) SaveConversationState(c echo.Context) error {
	ctx := c.Request().Context()
	t := dash.AdminFrom(c).Tenant
	id := c.Param("id")
	in := manage.ConversationStateInput{Status: c.FormValue("status")}
	if _, ok := moveDone[in.Status]; !ok {
		return parley.Errorf(parley.KindInvalid, "Choose to take the conversation over, hand it back or close it")
	}
	status, notice := http.StatusOK, ""
	if _, err := h.Manage.MoveConversation(ctx, t.ID, id, in, personOf(c)); err != nil {
		var ok bool
		if status, _, notice, ok = dash.FormStatus(err); !ok {
			return err
		}
	}
	if !dash.IsHTMX(c) {
		if notice != "" {
			h.Sessions.Put(ctx, dash.SessFlashError, notice)
		} else {
			h.Sessions.Put(ctx, dash.SessFlash, moveDone[in.Status])
		}
		return c.Redirect(http.StatusSeeOther, "/admin/conversations/"+id)
	}
	l, err := h.liveNow(c)
	if err != nil {
		return err
	}
	l.Notice = notice
	return handlers.Render(c, status, views.LiveFragment(l))
}

// SendPersonReply stores the signed-in user's reply to the visitor, which
// takes the conversation over when nobody holds it. htmx gets the reply box
// again (empty, or with the text and what is wrong) and the live section
// beside it, out of band; a plain form goes back to the page, or gets the
// page again with the problem.
func (h *Leads) SendPersonReply(c echo.Context) error {
	ctx := c.Request().Context()
	t := dash.AdminFrom(c).Tenant
	id := c.Param("id")
	in := manage.PersonReplyInput{Content: c.FormValue("content")}
	_, _, err := h.Manage.ReplyAsPerson(ctx, t.ID, id, in, personOf(c))
	f := replyForm(c, id)
	status := http.StatusOK
	if err != nil {
		var ok bool
		if status, f.Errors, f.Message, ok = dash.FormStatus(err); !ok {
			return err
		}
		f.Content = c.FormValue("content")
		if msg, bad := f.Errors["content"]; bad { // the field says it: no message above it too
			f.Errors, f.Message = views.Errors{"content": replyProblem(msg)}, ""
		}
	}
	if !dash.IsHTMX(c) {
		if err == nil {
			return c.Redirect(http.StatusSeeOther, "/admin/conversations/"+id)
		}
		return h.renderConversationPage(c, status, f)
	}
	l, err := h.liveNow(c)
	if err != nil {
		return err
	}
	l.OOB = true
	return handlers.Render(c, status, templ.Join(views.ReplyBox(f), views.LiveFragment(l)))
}

// replyProblem is what is wrong with a reply, in a sentence.
func replyProblem(msg string) string {
	switch {
	case msg == "is required":
		return "Write a reply before sending it."
	case strings.HasPrefix(msg, "must be at most"):
		return "Your reply is too long: at most 15,000 characters."
	}
	return "Your reply " + msg + "."
}

// DraftPersonReply has the assistant draft the signed-in person's next
// reply to the visitor, from the knowledge base and the conversation so far
// (handlers.Base.DraftReply), with a one-line summary of the conversation:
// the reply box comes back holding the draft, which the person edits and
// sends, or ignores. Nothing is stored or sent. A model that fails leaves
// the box as it was, with the reason above it.
func (h *Leads) DraftPersonReply(c echo.Context) error {
	f := replyForm(c, c.Param("id"))
	d, err := h.Base.DraftReply(c.Request().Context(), dash.AdminFrom(c).Tenant, f.ID)
	status := http.StatusOK
	switch parley.ErrorKind(err) {
	case parley.KindInvalid: // nothing to answer yet
		status = http.StatusUnprocessableEntity
	case parley.KindUpstream: // the model failed
		status = http.StatusBadGateway
	default:
		if err != nil {
			return err
		}
		f.Content, f.Summary = d.Reply, d.Summary
	}
	if err != nil {
		f.Message = "The assistant could not draft a reply: " + err.Error()
		f.Content = c.FormValue("content")
	}
	if !dash.IsHTMX(c) {
		return h.renderConversationPage(c, status, f)
	}
	return handlers.Render(c, status, views.ReplyBox(f))
}
