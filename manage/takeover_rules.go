package manage

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/parley/parley"
)

// A person's part in a conversation: the limits of their name and replies
// (a reply is held to the chat message's limit).
const (
	MaxPersonName   = 100
	MaxReplyMessage = 15000
)

// ConversationStateInput is a person's move of a conversation (its JSON is
// the REST API's): Status HUMAN takes it (Assignee names the person when
// the caller is not a dashboard user), BOT hands it back to the
// assistant, ESCALATED puts it back in the people's queue, CLOSED ends it.
type ConversationStateInput struct {
	Status   string             `json:"status"`
	Assignee string             `json:"assignee"`
	Problems parley.FieldErrors `json:"-"` // what the surface could not read, reported first
}

// Check trims the assignee and returns the problems; needName says the
// caller has no name of its own (an integrator), so that taking needs one.
func (in *ConversationStateInput) Check(needName bool) parley.FieldErrors {
	errs := in.Problems.Copy()
	if _, bad := errs["status"]; !bad && !slices.Contains(parley.ConversationStatuses, in.Status) {
		errs.Add("status", "must be BOT, ESCALATED, HUMAN or CLOSED")
	}
	in.Assignee = strings.TrimSpace(in.Assignee)
	checkPersonName(errs, "assignee", in.Assignee, needName && in.Status == parley.StatusHuman)
	return errs
}

// PersonReplyInput is a person's reply to the visitor (its JSON is the
// REST API's): AuthorName names the person when the caller is not a
// dashboard user; without it, the name of whoever holds the conversation.
type PersonReplyInput struct {
	Content    string             `json:"content"`
	AuthorName string             `json:"authorName"`
	Problems   parley.FieldErrors `json:"-"`
}

// Check trims the reply and the name and returns the problems.
func (in *PersonReplyInput) Check() parley.FieldErrors {
	errs := in.Problems.Copy()
	in.Content = strings.TrimSpace(in.Content)
	switch n := utf8.RuneCountInString(in.Content); {
	case errs["content"] != "":
	case n == 0:
		errs.Add("content", "is required")
	case n > MaxReplyMessage:
		errs.Add("content", "must be at most 15000 characters")
	}
	in.AuthorName = strings.TrimSpace(in.AuthorName)
	checkPersonName(errs, "authorName", in.AuthorName, false)
	return errs
}

// checkPersonName adds the problems of a person's name: at most
// MaxPersonName characters, on one line.
func checkPersonName(errs parley.FieldErrors, field, name string, required bool) {
	switch {
	case name == "":
		if required {
			errs.Add(field, "is required: the name the visitor is shown")
		}
	case utf8.RuneCountInString(name) > MaxPersonName:
		errs.Add(field, "must be at most 100 characters")
	case strings.ContainsFunc(name, unicode.IsControl):
		errs.Add(field, "must be one line of text")
	}
}
