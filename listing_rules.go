package parley

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// The rules of the listings every surface reads (the REST API's queries,
// the MCP server's and the chat-admin tools' arguments, the dashboard's
// filters): their parameters' bounds, and the error that names the
// parameter at fault.

// A visitors listing's limits, chosen here and documented in the OpenAPI
// document.
const (
	DefaultVisitorsPage = 50
	MaxVisitorsPage     = 200
	MaxVisitorSearch    = 200
)

// CheckCount refuses an integer parameter outside [min, max]; max
// math.MaxInt means no upper bound. A surface reads a value that is not an
// integer as math.MinInt, outside every range, so that it gets the same
// problem.
func CheckCount(errs FieldErrors, field string, n, min, max int) {
	switch {
	case n >= min && n <= max:
	case max == math.MaxInt:
		errs.Add(field, fmt.Sprintf("must be an integer of at least %d", min))
	default:
		errs.Add(field, fmt.Sprintf("must be an integer between %d and %d", min, max))
	}
}

// ParamsError is the invalid-kind Error of a listing's problems, nil
// without any. Its message names the parameter ("limit must be an integer
// between 1 and 100"), which the dashboard shows as it is; several
// problems are joined in the order of their parameters' names.
func ParamsError(errs FieldErrors) error {
	if len(errs) == 0 {
		return nil
	}
	return &Error{Kind: KindInvalid, Message: errs.Sentence(), Details: map[string]string(errs)}
}

// VisitorListing is a page of the tenant's visitors, newest first, as a
// caller asks for it (its JSON is the MCP tool's arguments): Search words
// in emails, names or external ids. NewVisitorListing gives the defaults a
// caller overrides with what it was given.
type VisitorListing struct {
	Limit  int    `json:"limit"`
	Offset int    `json:"offset"`
	Search string `json:"search"`
}

// NewVisitorListing is the first page of all visitors.
func NewVisitorListing() VisitorListing { return VisitorListing{Limit: DefaultVisitorsPage} }

// Check trims the search and returns the listing's problems.
func (l *VisitorListing) Check() FieldErrors {
	errs := FieldErrors{}
	CheckCount(errs, "limit", l.Limit, 1, MaxVisitorsPage)
	CheckCount(errs, "offset", l.Offset, 0, math.MaxInt)
	l.Search = strings.TrimSpace(l.Search)
	if utf8.RuneCountInString(l.Search) > MaxVisitorSearch {
		errs.Add("search", TooLong(MaxVisitorSearch))
	}
	return errs
}
