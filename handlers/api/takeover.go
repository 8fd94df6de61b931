package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
	"github.com/parley/parley/handlers/resource"
	"github.com/parley/parley/manage"
)

// MoveConversation answers POST /tenants/{slug}/conversations/{id}/state:
// body {status, assignee}. HUMAN takes the conversation for the person
// assignee names (409 when another person holds it, naming them); BOT
// hands it back to the assistant; ESCALATED puts it back in the queue;
// CLOSED ends it.
func (h *Leads) MoveConversation(c echo.Context) error {
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	var in manage.ConversationStateInput
	in.Problems = jsonbody.DecodeFields(raw, &in)
	mv, err := h.Manage.MoveConversation(c.Request().Context(), handlers.TenantFrom(c).ID, c.Param("id"), in, nil)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resource.NewConversationStateJSON(mv))
}

// ReplyToConversation answers POST /tenants/{slug}/conversations/{id}/messages:
// body {content, authorName}. The person's reply reaches the visitor; it
// takes the conversation over when nobody holds it.
func (h *Leads) ReplyToConversation(c echo.Context) error {
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	var in manage.PersonReplyInput
	in.Problems = jsonbody.DecodeFields(raw, &in)
	m, _, err := h.Manage.ReplyAsPerson(c.Request().Context(), handlers.TenantFrom(c).ID, c.Param("id"), in, nil)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, resource.NewConversationMessageJSON(m))
}

// draftJSON is a suggested reply for the person who holds a conversation.
type draftJSON struct {
	Summary *string `json:"summary"`
	Reply   string  `json:"reply"`
	Model   string  `json:"model"`
}

// DraftReply answers POST /tenants/{slug}/conversations/{id}/draft: the
// assistant's draft of a person's next reply to the visitor, from the
// knowledge base and the conversation so far, with a one-line summary of
// the conversation. Nothing is stored or sent.
func (h *Leads) DraftReply(c echo.Context) error {
	d, err := h.Base.DraftReply(c.Request().Context(), handlers.TenantFrom(c), c.Param("id"))
	if err != nil {
		return err
	}
	out := draftJSON{Reply: d.Reply, Model: d.Model}
	if d.Summary != "" {
		out.Summary = &d.Summary
	}
	return c.JSON(http.StatusOK, out)
}
