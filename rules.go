package parley

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// The building blocks of the field rules every surface applies alike (the
// REST API, the dashboard, MCP and the chat-admin tools, through the
// management operations): each checks one field of a write, adding its
// problem to errs under the field's wire name.

// MaxPage bounds every listing's page number, to keep page*limit far from
// overflowing an offset.
const MaxPage = 1000000

// MaxURL bounds every URL a tenant gives (webhooks, sources, endpoints).
const MaxURL = 500

// Tags' limits, shared by corpus entries and products.
const (
	MaxTags = 20
	MaxTag  = 50
)

// NoNUL is the problem of text holding a NUL character, which PostgreSQL
// cannot store.
const NoNUL = "must not contain NUL characters"

// TooLong is the problem of a text longer than n characters.
func TooLong(n int) string { return fmt.Sprintf("must be at most %d characters", n) }

// CheckLen refuses a set text of more than max characters.
func CheckLen(errs FieldErrors, field string, o Opt[string], max int) {
	if o.Set && !o.Null && utf8.RuneCountInString(o.Value) > max {
		errs.Add(field, TooLong(max))
	}
}

// CheckText checks a text field that cannot be cleared: set when required
// ("is required"), not null, not blank, at most max characters.
func CheckText(errs FieldErrors, field string, o Opt[string], max int, required bool) {
	if required && !o.Set {
		errs.Add(field, "is required")
		return
	}
	if NotNull(errs, field, o) {
		if strings.TrimSpace(o.Value) == "" {
			errs.Add(field, "must not be empty")
		}
		CheckLen(errs, field, o, max)
	}
}

// NullIfEmpty makes an empty (or blank) string a clear: forms send "" for
// an emptied field.
func NullIfEmpty(o *Opt[string]) {
	if o.Set && !o.Null && strings.TrimSpace(o.Value) == "" {
		o.Null = true
		o.Value = ""
	}
}

// NotNull refuses null for a field that cannot be cleared; it reports
// whether the field is set to a value.
func NotNull[T any](errs FieldErrors, field string, o Opt[T]) bool {
	if o.Set && o.Null {
		errs.Add(field, "must not be null")
		return false
	}
	return o.Set
}

// CheckEnum refuses a value not in allowed (and null).
func CheckEnum(errs FieldErrors, field string, o Opt[string], allowed []string) {
	if NotNull(errs, field, o) && !slices.Contains(allowed, o.Value) {
		errs.Add(field, "must be one of "+strings.Join(allowed, ", "))
	}
}

// CheckHTTPURL refuses a set URL that is not absolute http(s) (https only
// when httpsOnly), or longer than MaxURL.
func CheckHTTPURL(errs FieldErrors, field string, o Opt[string], httpsOnly bool) {
	if !o.Set || o.Null {
		return
	}
	if utf8.RuneCountInString(o.Value) > MaxURL {
		errs.Add(field, TooLong(MaxURL))
		return
	}
	u, err := url.Parse(o.Value)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		errs.Add(field, "must be an absolute URL such as https://example.com/path")
	case httpsOnly && u.Scheme != "https":
		errs.Add(field, "must use https")
	}
}

// NormalizeTags trims tags, drops empty and repeated ones, and checks
// their limits.
func NormalizeTags(errs FieldErrors, o *Opt[[]string]) {
	if !o.Set || o.Null {
		return
	}
	tags := []string{}
	for _, t := range o.Value {
		if t = strings.TrimSpace(t); t != "" && !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
		if utf8.RuneCountInString(t) > MaxTag {
			errs.Add("tags", "each tag "+TooLong(MaxTag))
		}
	}
	if len(tags) > MaxTags {
		errs.Add("tags", fmt.Sprintf("at most %d tags", MaxTags))
	}
	o.Value = tags
}
