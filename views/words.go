package views

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The dashboard shows the API's validation messages, which name fields as
// the API does (durationMinutes, segmentSlug) and speak of snake_case. Every
// error message a dashboard page shows goes through OwnerWords, the one
// place where they become the owner's words.

// fieldWords are the API's field names in the owner's words.
var fieldWords = map[string]string{
	"durationMinutes": "meeting length (minutes)", "validityDays": "validity (days)", "unitPrice": "unit price",
	"maxResults": "number of suggestions", "allowedKeys": "allowed keys", "webhookUrl": "webhook address",
	"segmentSlug": "segment", "systemPrompt": "instructions", "welcomeMessage": "welcome message",
	"conversationStarters": "conversation starters", "formConfig": "lead form", "primaryColor": "primary colour",
	"secondaryColor": "secondary colour", "botName": "bot name", "botTitle": "bot title", "botLore": "background",
	"botAvatar": "avatar", "teaserText": "teaser", "autoOpenDelay": "auto-open delay", "allowedDomains": "allowed domains",
	"llmWebhookUrl": "reply endpoint", "visitorContextUrl": "visitor context address", "visitorAuthMode": "visitor identification",
	"captchaSiteKey": "challenge site key", "captchaSecretKey": "challenge secret key", "externalId": "external id",
	"sourceUrl": "source address", "isActive": "active", "isDefault": "default", "piiFields": "fields removed",
	"confirmationMessage": "confirmation message", "displayName": "name", "imageUrl": "image address", "productUrl": "product address",
}

var camelWord = regexp.MustCompile(`\b[a-z]+(?:[A-Z][a-z0-9]*)+\b`)

// OwnerWords rewrites an error message for the dashboard: field names in
// the owner's words, snake_case explained, the API's query parameters left
// out.
func OwnerWords(msg string) string {
	msg = strings.ReplaceAll(msg, "snake_case (lowercase letters, digits, underscores; at most 64)", "lower-case letters, digits and underscores, at most 64")
	msg = strings.ReplaceAll(msg, " (snake_case recommended)", "")
	msg = strings.ReplaceAll(msg, "(snake_case)", "(lower-case letters, digits and underscores)")
	msg = strings.ReplaceAll(msg, "snake_case", "lower-case letters, digits and underscores")
	msg = strings.ReplaceAll(msg, "delete with ?cascade=true to delete them too", "delete them together with it")
	return camelWord.ReplaceAllStringFunc(msg, func(w string) string {
		if words, ok := fieldWords[w]; ok {
			return words
		}
		return strings.ToLower(FieldLabel(w))
	})
}

// FieldLabel turns a field name (snake_case or camelCase) into words:
// full_name and fullName are both "Full name".
func FieldLabel(key string) string {
	var b strings.Builder
	prevLower := false
	for _, r := range key {
		switch {
		case r == '_' || r == '-' || r == ' ':
			if b.Len() > 0 {
				b.WriteRune(' ')
			}
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			b.WriteRune(' ')
		}
		b.WriteRune(unicode.ToLower(r))
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	words := strings.Join(strings.Fields(b.String()), " ")
	if words == "" {
		return key
	}
	r, n := utf8.DecodeRuneInString(words)
	return string(unicode.ToUpper(r)) + words[n:]
}
