package parley

import (
	"encoding/json"
	"time"
)

// AnonymousIDPrefix starts every anonymous id: the widget's random id of a
// browser (chat's anonymousId), "anon_" and 32 lowercase hex digits, 128
// random bits.
const AnonymousIDPrefix = "anon_"

// AnonymousIDRule is the rule an anonymousId breaks, as chat says it.
const AnonymousIDRule = `anonymousId must be "anon_" followed by 32 lowercase hex digits (128 random bits)`

// InvalidAnonymousID is the 400 of an anonymousId that breaks the rule.
func InvalidAnonymousID() error {
	return &Error{Kind: KindInvalid, Message: AnonymousIDRule, Details: FieldErrors{"anonymousId": AnonymousIDRule}}
}

// ValidAnonymousID reports whether id has the form of an anonymous id.
func ValidAnonymousID(id string) bool {
	if len(id) != len(AnonymousIDPrefix)+32 || id[:len(AnonymousIDPrefix)] != AnonymousIDPrefix {
		return false
	}
	for _, c := range []byte(id[len(AnonymousIDPrefix):]) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Visitor is a person (or agent) who talked to a tenant's bot.
type Visitor struct {
	ID           string          `db:"id"`
	TenantID     string          `db:"tenant_id"`
	Email        *string         `db:"email"`
	DisplayName  *string         `db:"display_name"`
	Phone        *string         `db:"phone"`
	AuthProvider *string         `db:"auth_provider"`
	ExternalID   *string         `db:"external_id"`
	Metadata     json.RawMessage `db:"metadata"`
	CreatedAt    time.Time       `db:"created_at"`
	UpdatedAt    time.Time       `db:"updated_at"`
	// Anonymous says the visitor is known only by the widget's anonymous
	// id (chat's anonymousId): no email, no externalId. Such a visitor is
	// nobody in particular: the id proves only that the browser's storage
	// is the one that talked before.
	Anonymous bool `db:"anonymous"`
}

// MemoryFact is one remembered fact about a visitor.
type MemoryFact struct {
	Key       string    `db:"key"`
	Value     string    `db:"value"`
	UpdatedAt time.Time `db:"updated_at"`
}

// How a conversation's visitor was verified within it.
const (
	VerifiedByCode      = "code"      // a code sent by email (VERIFY_VISITOR_CODE)
	VerifiedByChallenge = "challenge" // the context webhook's challenge (VERIFY_EXTERNAL_CHALLENGE)
)

// SessionVerification is what a session's conversation proved of its
// visitor: how (VerifiedBy...), and the visitor it was verified as, nil for
// a challenge passed by an anonymous visitor.
type SessionVerification struct {
	By      string
	Visitor *Visitor
}

// VerificationCode is the code last sent in a conversation, as stored: its
// HMAC-SHA256 under its own salt, never the code.
type VerificationCode struct {
	Email     string
	Hash      []byte
	Salt      []byte
	Attempts  int
	ExpiresAt time.Time
}

// Why a try of a verification code could not be checked.
const (
	CodeTryOK        = ""          // the try is counted: compare the code
	CodeTryNone      = "none"      // no code was sent in the conversation
	CodeTryExpired   = "expired"   // the code expired
	CodeTryExhausted = "exhausted" // every try of the code was used
)
