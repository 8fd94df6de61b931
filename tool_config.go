package parley

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Tool types a tenant can create.
const (
	ToolSubmitForm       = "SUBMIT_FORM"
	ToolGenerateQuote    = "GENERATE_QUOTE"
	ToolBookMeeting      = "BOOK_MEETING"
	ToolEscalateToHuman  = "ESCALATE_TO_HUMAN"
	ToolRememberFact     = "REMEMBER_FACT"
	ToolRecommendProduct = "RECOMMEND_PRODUCT"
)

// AdminToolType is the tool type of a management tool a chat's admin
// token adds to a turn (tools.Extra), in the tool history.
const AdminToolType = "MCP_ADMIN"

// UserToolTypes are the types the API creates, in the order forms list them.
var UserToolTypes = []string{ToolSubmitForm, ToolGenerateQuote, ToolBookMeeting, ToolEscalateToHuman, ToolRememberFact, ToolRecommendProduct}

// SubmissionToolTypes are the types whose runs produce submissions: the lead
// form (SUBMIT_FORM, also the type of the standalone form's), quotes, meeting
// bookings and handovers to a person. The other types answer the visitor or
// act on the conversation, and leave no submission.
var SubmissionToolTypes = []string{ToolSubmitForm, ToolGenerateQuote, ToolBookMeeting, ToolEscalateToHuman}

// SyntheticToolTypes are injected at chat time and never created through the API.
var SyntheticToolTypes = []string{"CHECK_AVAILABILITY", "COLLECT_PAYMENT", "EXPLORE_CORPUS",
	"SEND_VERIFICATION_CODE", "VERIFY_VISITOR_CODE", "VERIFY_EXTERNAL_CHALLENGE", "MCP_PROXY", AdminToolType}

// SubmitFormConfig is a SUBMIT_FORM tool's form.
type SubmitFormConfig struct {
	Fields              []FormField `json:"fields"`
	ConfirmationMessage string      `json:"confirmationMessage,omitempty"`
}

// QuoteConfig is a GENERATE_QUOTE tool's price list; quotes are computed from it, never by the model.
type QuoteConfig struct {
	Currency     string      `json:"currency"`
	Items        []QuoteItem `json:"items"`
	TaxRate      float64     `json:"taxRate"`      // percent added to the subtotal, 0..100
	ValidityDays int         `json:"validityDays"` // how long a quote holds, 1..365
}

// QuoteItem is one priced line of a price list.
type QuoteItem struct {
	Name        string        `json:"name"`
	Description string        `json:"description,omitempty"`
	UnitPrice   float64       `json:"unitPrice"`
	Currency    string        `json:"currency"`
	Unit        string        `json:"unit,omitempty"`
	Options     []QuoteOption `json:"options,omitempty"`
}

// QuoteOption is an optional extra on an item, priced per unit.
type QuoteOption struct {
	Name      string  `json:"name"`
	UnitPrice float64 `json:"unitPrice"`
}

// MeetingConfig is a BOOK_MEETING tool's booking rules.
type MeetingConfig struct {
	DurationMinutes   int `json:"durationMinutes"`
	BufferMinutes     int `json:"bufferMinutes"`
	BookingWindowDays int `json:"bookingWindowDays"`
	MinNoticeHours    int `json:"minNoticeHours"`
}

// DefaultMeetingConfig is a BOOK_MEETING tool's rules where its config says
// nothing: 30 minutes, booked 2 hours to 30 days ahead, no buffer.
func DefaultMeetingConfig() MeetingConfig {
	return MeetingConfig{DurationMinutes: 30, BookingWindowDays: 30, MinNoticeHours: 2}
}

// RememberConfig limits the keys REMEMBER_FACT may store; empty allows any.
type RememberConfig struct {
	AllowedKeys []string `json:"allowedKeys"`
}

// RecommendConfig bounds RECOMMEND_PRODUCT's answers.
type RecommendConfig struct {
	MaxResults int `json:"maxResults"`
}

// EscalateConfig is what ESCALATE_TO_HUMAN tells the visitor after handing over.
type EscalateConfig struct {
	HandoffMessage string `json:"handoffMessage,omitempty"`
}

var (
	currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)
	// MemoryKeyPattern is the shape of a memory fact key.
	MemoryKeyPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
)

// ValidateToolConfig checks raw (may be nil: defaults) against the type's
// schema, rejects unknown keys, fills defaults and returns the normalised
// config to store. Problems are returned as one message per problem.
func ValidateToolConfig(toolType string, raw json.RawMessage) (json.RawMessage, []string) {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = json.RawMessage("{}")
	}
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	decode := func(dst any) bool {
		// encoding/json matches keys case-insensitively; the schema does not.
		var keys map[string]json.RawMessage
		if json.Unmarshal(raw, &keys) == nil {
			known := jsonKeys(dst)
			for k := range keys {
				if !known[k] {
					add("unknown key %q for %s", k, toolType)
				}
			}
			if len(problems) > 0 {
				return false
			}
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(dst); err != nil {
			var te *json.UnmarshalTypeError
			switch {
			case errors.As(err, &te) && te.Field == "":
				add("config must be a JSON object")
			case errors.As(err, &te):
				add("%s has the wrong type (expected %s)", te.Field, te.Type)
			case strings.HasPrefix(err.Error(), "json: unknown field"):
				add("unknown key %s for %s", strings.TrimPrefix(err.Error(), "json: unknown field "), toolType)
			default:
				add("config must be a JSON object")
			}
			return false
		}
		return true
	}
	var out any
	switch toolType {
	case ToolSubmitForm:
		var c SubmitFormConfig
		if decode(&c) {
			if len(c.Fields) == 0 {
				add("fields: a form needs at least one field")
			}
			errs := FieldErrors{}
			ValidateFormFields(errs, "fields", c.Fields)
			for _, m := range errs {
				add("fields: %s", m)
			}
			if utf8.RuneCountInString(c.ConfirmationMessage) > 500 {
				add("confirmationMessage must be at most 500 characters")
			}
		}
		out = c
	case ToolGenerateQuote:
		c := QuoteConfig{ValidityDays: 30}
		if decode(&c) {
			validateQuote(&c, add)
		}
		out = c
	case ToolBookMeeting:
		c := DefaultMeetingConfig()
		if decode(&c) {
			inRange := func(name string, v, min, max int) {
				if v < min || v > max {
					add("%s must be between %d and %d", name, min, max)
				}
			}
			inRange("durationMinutes", c.DurationMinutes, 5, 480)
			inRange("bufferMinutes", c.BufferMinutes, 0, 240)
			inRange("bookingWindowDays", c.BookingWindowDays, 1, 365)
			inRange("minNoticeHours", c.MinNoticeHours, 0, 720)
		}
		out = c
	case ToolRememberFact:
		c := RememberConfig{AllowedKeys: []string{}}
		if decode(&c) {
			if len(c.AllowedKeys) > 50 {
				add("allowedKeys: at most 50 keys")
			}
			for _, k := range c.AllowedKeys {
				if !MemoryKeyPattern.MatchString(k) {
					add("allowedKeys: %q must be snake_case (lowercase letters, digits, underscores; at most 64)", k)
				}
			}
			if c.AllowedKeys == nil {
				c.AllowedKeys = []string{}
			}
		}
		out = c
	case ToolRecommendProduct:
		c := RecommendConfig{MaxResults: 3}
		if decode(&c) && (c.MaxResults < 1 || c.MaxResults > 10) {
			add("maxResults must be between 1 and 10")
		}
		out = c
	case ToolEscalateToHuman:
		var c EscalateConfig
		if decode(&c) && utf8.RuneCountInString(c.HandoffMessage) > 500 {
			add("handoffMessage must be at most 500 characters")
		}
		out = c
	default:
		add("unknown tool type %s", toolType)
	}
	if len(problems) > 0 {
		return nil, problems
	}
	normalised, _ := json.Marshal(out)
	return normalised, nil
}

// jsonKeys lists the JSON field names of the struct dst points to.
func jsonKeys(dst any) map[string]bool {
	t := reflect.TypeOf(dst).Elem()
	keys := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		keys[name] = true
	}
	return keys
}

func validateQuote(c *QuoteConfig, add func(string, ...any)) {
	if !currencyPattern.MatchString(c.Currency) {
		add("currency must be an ISO 4217 code such as EUR or USD")
	}
	if len(c.Items) == 0 || len(c.Items) > 200 {
		add("items: a price list needs 1 to 200 items")
	}
	if c.TaxRate < 0 || c.TaxRate > 100 {
		add("taxRate must be a percentage between 0 and 100")
	}
	if c.ValidityDays < 1 || c.ValidityDays > 365 {
		add("validityDays must be between 1 and 365")
	}
	seen := map[string]bool{}
	for i := range c.Items {
		it := &c.Items[i]
		it.Name = strings.TrimSpace(it.Name)
		where := fmt.Sprintf("items[%d]", i)
		switch {
		case it.Name == "" || utf8.RuneCountInString(it.Name) > 100:
			add("%s: name is required, at most 100 characters", where)
		case seen[strings.ToLower(it.Name)]:
			add("%s: name %q is used twice", where, it.Name)
		}
		seen[strings.ToLower(it.Name)] = true
		if it.Currency == "" {
			it.Currency = c.Currency
		}
		if it.Currency != c.Currency {
			add("%s: currency %s differs from the price list's %s", where, it.Currency, c.Currency)
		}
		checkMoney(where+".unitPrice", it.UnitPrice, add)
		if utf8.RuneCountInString(it.Description) > 500 || utf8.RuneCountInString(it.Unit) > 30 {
			add("%s: description at most 500 characters, unit at most 30", where)
		}
		if len(it.Options) > 20 {
			add("%s: at most 20 options", where)
		}
		for j, o := range it.Options {
			if strings.TrimSpace(o.Name) == "" || utf8.RuneCountInString(o.Name) > 100 {
				add("%s.options[%d]: name is required, at most 100 characters", where, j)
			}
			checkMoney(fmt.Sprintf("%s.options[%d].unitPrice", where, j), o.UnitPrice, add)
		}
	}
}

// checkMoney accepts amounts from 0 to one billion with at most two decimals.
func checkMoney(where string, v float64, add func(string, ...any)) {
	cents := v * 100
	if v < 0 || v > 1e9 || math.Abs(cents-math.Round(cents)) > 1e-6 {
		add("%s must be between 0 and 1000000000 with at most two decimals", where)
	}
}

// LeadOffer is what a visitor whom nobody of the team can answer is
// offered: the lead form (its fields' labels), or, without one, a reply by
// email. The escalation tool outside the team's hours and the job that
// ends an unanswered wait both say it.
func LeadOffer(fields []FormField) string {
	var labels []string
	byEmail := false
	for _, f := range fields {
		if l := strings.TrimSpace(f.Label); l != "" {
			labels = append(labels, l)
		}
		byEmail = byEmail || f.Type == "email"
	}
	switch {
	case len(labels) == 0:
		return "Tell me your email address and someone will reply to you by email."
	case byEmail:
		return "Leave your details here (" + strings.Join(labels, ", ") + ") and someone will write back to you by email."
	}
	return "Leave your details here (" + strings.Join(labels, ", ") + ") and someone will get back to you."
}
