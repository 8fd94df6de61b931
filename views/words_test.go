package views

import (
	"strings"
	"testing"
)

func TestOwnerWords(t *testing.T) {
	for in, want := range map[string]string{
		"durationMinutes must be between 5 and 480":                                                                                         "meeting length (minutes) must be between 5 and 480",
		`allowedKeys: "X" must be snake_case (lowercase letters, digits, underscores; at most 64)`:                                          `allowed keys: "X" must be lower-case letters, digits and underscores, at most 64`,
		"must be 1 to 64 letters, digits, underscores, dots or hyphens (snake_case recommended)":                                            "must be 1 to 64 letters, digits, underscores, dots or hyphens",
		`Segment "a" still has 1 corpus entries and 0 tools: move them to another segment, or delete with ?cascade=true to delete them too`: `Segment "a" still has 1 corpus entries and 0 tools: move them to another segment, or delete them together with it`,
		"someNewField is wrong": "some new field is wrong",
		"must not be empty":     "must not be empty",
	} {
		got := OwnerWords(in)
		if got != want {
			t.Errorf("OwnerWords(%q) = %q, want %q", in, got, want)
		}
		if leak := leakInMessage(got); leak != "" {
			t.Errorf("OwnerWords(%q) still holds %q", in, leak)
		}
	}
}

func TestLeakInMessage(t *testing.T) {
	for in, want := range map[string]string{
		`segmentSlug no segment with slug "x"`: "segmentSlug",
		"name must be snake_case":              "snake_case",
		"or delete with ?cascade=true":         "?cascade",
		"must be at most 50 characters":        "",
	} {
		if got := leakInMessage(in); got != want {
			t.Errorf("leakInMessage(%q) = %q, want %q", in, got, want)
		}
	}
}

// leakInMessage reports what of the API's own language an owner-facing
// message still holds ("" when none): a camelCase field name (camelWord,
// what OwnerWords rewrites), snake_case, a query parameter. web's tests
// check every error a dashboard page shows with the same rules.
func leakInMessage(msg string) string {
	if w := camelWord.FindString(msg); w != "" {
		return w
	}
	for _, s := range []string{"snake_case", "?cascade", "cascade=true"} {
		if strings.Contains(msg, s) {
			return s
		}
	}
	return ""
}
