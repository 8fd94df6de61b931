package public

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
)

// Standalone form limits, chosen here and documented in the OpenAPI document.
const (
	maxFormBody      = 64 << 10
	maxFormValue     = 2000
	maxFormPageURL   = 2000
	maxFormVisitorID = 255
	// maxFormSessionID is a chat session id's longest, as the chat's.
	maxFormSessionID = 100
	// formToolType is the tool type of a standalone form's submissions, the
	// same as a SUBMIT_FORM tool's, so that lists filter them together.
	formToolType = "SUBMIT_FORM"
	// defaultFormToolName names the submission's tool when the form has no intent.
	defaultFormToolName = "form"
	// defaultFormConfirmation is the answer when the form has no confirmation message.
	defaultFormConfirmation = "Thank you, we will be in touch."
)

// formRequest is the body of POST /form/{slug}. Fields stay raw until the
// segment's form says what each must hold.
type formRequest struct {
	Segment      string                     `json:"segment"`
	Fields       map[string]json.RawMessage `json:"fields"`
	PageURL      string                     `json:"pageUrl"`
	VisitorID    string                     `json:"visitorId"`
	SessionID    string                     `json:"sessionId"`
	AnonymousID  string                     `json:"anonymousId"`
	WidgetKey    string                     `json:"widgetKey"`
	CaptchaToken string                     `json:"captchaToken"`
}

// formReply is the answer to a stored submission.
type formReply struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Message string `json:"message"`
}

// SubmitForm answers POST /form/{slug}: a visitor sends the standalone lead
// form of a segment, without a chat. The chat's gates run in the chat's
// order (tenant, plan, origin, widget key, bot challenge, per-address limit,
// segment), and a form post counts toward the same per-address limit as a
// chat message. The values are checked against the segment's form and
// stored as one NEW submission of channel form; its submission.created
// event is recorded in the same transaction. A form sent inside the chat
// widget names its session (sessionId): the submission joins that
// session's conversation when the tenant has one (formLinks), and the
// visitor takes the name and email typed in (parley.FormContact).
func (h *Handler) SubmitForm(c echo.Context) error {
	ctx := c.Request().Context()
	count := handlers.CountAddress(c, h.DB, h.Now, h.Logger, handlers.FormLimit)
	defer count.Settle()
	if err := jsonbody.RequireJSON(c.Request()); err != nil {
		return err
	}
	req, err := decodeFormRequest(c)
	if err != nil {
		return err
	}
	t, seg, err := h.publicGates(c, count, req.WidgetKey, req.CaptchaToken, req.Segment, false)
	if err != nil {
		return err
	}
	form := seg.FormConfig
	if form == nil || !form.Enabled {
		return parley.Errorf(parley.KindNotFound, "Form not enabled for this segment")
	}
	values, err := formValues(form.Fields, req.Fields)
	if err != nil {
		return err
	}
	input, err := json.Marshal(values)
	if err != nil {
		return fmt.Errorf("encoding form input: %w", err)
	}
	message := handlers.NonBlankOr(strings.TrimSpace(form.ConfirmationMessage), defaultFormConfirmation)
	result, err := json.Marshal(map[string]any{"success": true, "message": message})
	if err != nil {
		return fmt.Errorf("encoding form result: %w", err)
	}
	sub := parley.NewSubmission{
		TenantID: t.ID, ToolType: formToolType,
		ToolName: handlers.NonBlankOr(strings.TrimSpace(form.Intent), defaultFormToolName),
		Channel:  parley.ChannelForm, Input: input, Result: result, PageURL: handlers.NonEmptyPtr(req.PageURL),
	}
	if err := h.formLinks(c, t.ID, req, &sub); err != nil {
		return err
	}
	if sub.VisitorID != nil {
		sub.Contact = formContact(form.Fields, values)
	}
	s, _, err := h.DB.CreateSubmission(ctx, sub, nil)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, formReply{ID: s.ID, Status: s.Status, Message: message})
}

// decodeFormRequest reads the body and checks its shape; the values of
// fields are checked once the segment's form is known.
func decodeFormRequest(c echo.Context) (formRequest, error) {
	var req formRequest
	raw, err := jsonbody.DecodeObject(c, maxFormBody)
	if err != nil {
		return req, err
	}
	errs := jsonbody.DecodeFields(raw, &req)
	if _, bad := errs["fields"]; !bad && req.Fields == nil {
		errs.Add("fields", "is required: an object of the form's field names to values")
	}
	if utf8.RuneCountInString(req.PageURL) > maxFormPageURL {
		errs.Add("pageUrl", fmt.Sprintf("must be at most %d characters", maxFormPageURL))
	}
	if utf8.RuneCountInString(req.VisitorID) > maxFormVisitorID {
		errs.Add("visitorId", fmt.Sprintf("must be at most %d characters", maxFormVisitorID))
	}
	if utf8.RuneCountInString(req.SessionID) > maxFormSessionID {
		errs.Add("sessionId", fmt.Sprintf("must be at most %d characters", maxFormSessionID))
	}
	if req.AnonymousID != "" && !parley.ValidAnonymousID(req.AnonymousID) {
		errs.Add("anonymousId", parley.AnonymousIDRule)
	}
	return req, errs.Err()
}

// formValues checks the sent values against the form's fields and returns
// them, trimmed, under the tenant's field names. Every field is checked and
// every problem reported, keyed by field name. A value is a string (null
// counts as absent); empty optional fields are left out; names the form
// does not declare are refused rather than silently stored.
func formValues(fields []parley.FormField, sent map[string]json.RawMessage) (map[string]string, error) {
	errs := parley.FieldErrors{}
	declared := map[string]bool{}
	values := map[string]string{}
	for _, f := range fields {
		declared[f.Name] = true
		raw, ok := sent[f.Name]
		var v string
		if ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			if jsonbody.HasNUL(raw) {
				errs.Add(f.Name, "must not contain NUL characters")
				continue
			}
			if err := json.Unmarshal(raw, &v); err != nil {
				errs.Add(f.Name, "must be a string")
				continue
			}
			v = strings.TrimSpace(v)
		}
		switch {
		case v == "" && f.Required:
			errs.Add(f.Name, "is required")
		case v == "":
		case utf8.RuneCountInString(v) > maxFormValue:
			errs.Add(f.Name, fmt.Sprintf("must be at most %d characters", maxFormValue))
		case f.Type == "email" && (utf8.RuneCountInString(v) > parley.MaxVisitorEmail || !parley.VisitorEmailPattern.MatchString(v)):
			errs.Add(f.Name, "must be an email address")
		case f.Type == "phone" && !parley.VisitorPhonePattern.MatchString(v):
			errs.Add(f.Name, "must be a phone number: digits, optionally a leading +, spaces, dots, dashes, parentheses")
		default:
			values[f.Name] = v
		}
	}
	for name := range sent {
		if !declared[name] {
			errs.Add(name, "is not a field of this form")
		}
	}
	if len(errs) == 0 && len(values) == 0 {
		errs.Add("fields", "fill in at least one field")
	}
	return values, errs.Err()
}

// existingVisitor returns the id of the tenant's visitor named by ref (a
// visitor id, else an externalId), or nil when ref is empty or names none:
// a form post never creates a visitor, and an unknown reference does not
// cost the tenant the lead.
func (h *Handler) existingVisitor(ctx context.Context, tenantID, ref string) (*string, error) {
	if ref == "" {
		return nil, nil
	}
	v, err := h.DB.FindVisitor(ctx, tenantID, ref)
	if parley.ErrorKind(err) == parley.KindNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &v.ID, nil
}

// formLinks sets the submission's conversation and visitor. The
// conversation is the tenant's conversation of the sent sessionId; a
// session the tenant has no conversation of (none yet: the form came
// before the first message; or another tenant's, which is never looked at)
// leaves the submission without one, rather than costing the tenant the
// lead. The visitor is, in order: the one X-Visitor-Id or visitorId names
// (never created), the conversation's, else the browser's anonymous
// visitor (anonymousId, created as the chat would, so that the chat that
// follows on this browser has the same, now named, visitor).
func (h *Handler) formLinks(c echo.Context, tenantID string, req formRequest, sub *parley.NewSubmission) error {
	ctx := c.Request().Context()
	var convVisitor *string
	if sid := strings.TrimSpace(req.SessionID); sid != "" {
		id, visitor, err := h.DB.SessionConversation(ctx, tenantID, sid)
		if err != nil {
			return err
		}
		if id != "" {
			sub.ConversationID, convVisitor = &id, visitor
		}
	}
	ref := strings.TrimSpace(handlers.NonBlankOr(c.Request().Header.Get("X-Visitor-Id"), req.VisitorID))
	v, err := h.existingVisitor(ctx, tenantID, ref)
	switch {
	case err != nil:
		return err
	case v != nil:
		sub.VisitorID = v
	case convVisitor != nil:
		sub.VisitorID = convVisitor
	case req.AnonymousID != "":
		anon, err := h.DB.ResolveAnonymousVisitor(ctx, tenantID, req.AnonymousID)
		if err != nil {
			return err
		}
		sub.VisitorID = &anon.ID
	}
	return nil
}

// nameFields are the field names (lowercased, without "_") a form's name
// is read from, in order of preference; first and last names are joined.
var nameFields = []string{"fullname", "name", "yourname", "contactname"}

// formContact is the name and email the sent values hold: the first email
// field's value, and the name field's (fullname, name, ...), else first
// and last names joined. Nil when the form holds neither.
func formContact(fields []parley.FormField, values map[string]string) *parley.FormContact {
	var c parley.FormContact
	named := map[string]string{}
	for _, f := range fields {
		v := values[f.Name]
		if v == "" {
			continue
		}
		if f.Type == "email" && c.Email == "" {
			c.Email = v
		}
		if f.Type == "text" {
			named[strings.ReplaceAll(strings.ToLower(f.Name), "_", "")] = v
		}
	}
	for _, n := range nameFields {
		if named[n] != "" {
			c.Name = named[n]
			break
		}
	}
	if c.Name == "" {
		c.Name = strings.TrimSpace(named["firstname"] + " " + named["lastname"])
	}
	c.Name = parley.Clip(c.Name, parley.MaxVisitorName)
	if c.Name == "" && c.Email == "" {
		return nil
	}
	return &c
}
