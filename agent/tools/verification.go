package tools

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound"
)

// Visitor verification within a conversation: a 6-digit code sent by email
// (SEND_VERIFICATION_CODE, then VERIFY_VISITOR_CODE) under visitorAuthMode
// otp or all, and the context webhook's challenge (VERIFY_EXTERNAL_CHALLENGE).
// A conversation verified either way is its visitor's, verified, from the
// next message on: agent's Engine.open reads it before the prompt (memory,
// REMEMBER_FACT and the context webhook's identity follow).

// Verification code rules.
const (
	CodeTTL = 10 * time.Minute
	// CodeMaxTries is how many codes may be tried against one sent code.
	CodeMaxTries = 5
	// CodeResendAfter throttles sending: one code a minute per conversation
	// and per address.
	CodeResendAfter = time.Minute
	// CodeMailTimeout bounds the sending of a code, which the visitor waits
	// for: the tool says "sent" only once the mail server accepted it.
	CodeMailTimeout = 15 * time.Second
	// ChallengeTimeout bounds a call to a challenge's verifyUrl.
	ChallengeTimeout = 5 * time.Second
	// ChallengeEvent is the X-Service-Event of a challenge answer.
	ChallengeEvent = "visitor.challenge"
	// DefaultChallengeAttempts is a challenge's maxAttempts when it sets none.
	DefaultChallengeAttempts = 3
)

// The synthetic verification tools: types and the names the model sees.
const (
	SendVerificationCodeType    = "SEND_VERIFICATION_CODE"
	VerifyVisitorCodeType       = "VERIFY_VISITOR_CODE"
	VerifyExternalChallengeType = "VERIFY_EXTERNAL_CHALLENGE"
	sendCodeTool                = "send_verification_code"
	verifyCodeTool              = "verify_visitor_code"
	verifyChallengeTool         = "verify_external_challenge"
)

// VerificationStore keeps codes, challenge answers and verified
// conversations; *db.DB satisfies it.
type VerificationStore interface {
	SessionVerification(ctx context.Context, tenantID, sessionID string) (*parley.SessionVerification, error)
	SaveVerificationCode(ctx context.Context, tenantID, conversationID string, code parley.VerificationCode, now time.Time, throttle time.Duration) (time.Duration, error)
	DeleteVerificationCode(ctx context.Context, tenantID, conversationID string) error
	TryVerificationCode(ctx context.Context, tenantID, conversationID string, now time.Time, maxTries int) (parley.VerificationCode, string, error)
	VerifyConversationByCode(ctx context.Context, tenantID, conversationID, email string, now time.Time) (parley.Visitor, error)
	TryVerificationChallenge(ctx context.Context, tenantID, conversationID, challengeID string, maxTries int) (bool, error)
	VerifyConversationByChallenge(ctx context.Context, tenantID, conversationID string, visitorID *string, now time.Time) error
}

// Mailer sends one plain-text email; web adapts mail.Sender to it.
type Mailer interface {
	SendMail(ctx context.Context, to, subject, body string) error
}

// Challenge is the second factor a context webhook's answer may ask for:
// the agent relays Prompt to the visitor and posts the answer to VerifyURL.
type Challenge struct {
	// ID names the challenge; answers are counted per id (default: VerifyURL).
	ID     string `json:"id"`
	Prompt string `json:"prompt"`
	// VerifyURL receives the answer (SSRF-guarded, signed, 5 s).
	VerifyURL string `json:"verifyUrl"`
	// ExpiresAt, when set, is when the challenge stops being offered.
	ExpiresAt *time.Time `json:"expiresAt"`
	// MaxAttempts is how many answers the conversation may give (1 to 10,
	// default 3).
	MaxAttempts int `json:"maxAttempts"`
}

// Check validates a challenge as received, filling its defaults.
func (c *Challenge) Check(now time.Time) error {
	c.Prompt, c.VerifyURL, c.ID = strings.TrimSpace(c.Prompt), strings.TrimSpace(c.VerifyURL), strings.TrimSpace(c.ID)
	switch {
	case c.Prompt == "" || len(c.Prompt) > 1000:
		return errors.New("challenge.prompt must be 1 to 1000 characters")
	case !strings.HasPrefix(c.VerifyURL, "https://") && !strings.HasPrefix(c.VerifyURL, "http://"):
		return errors.New("challenge.verifyUrl must be an http(s) URL")
	case len(c.ID) > 200:
		return errors.New("challenge.id must be at most 200 characters")
	case c.MaxAttempts < 0 || c.MaxAttempts > 10:
		return errors.New("challenge.maxAttempts must be 1 to 10")
	case c.ExpiresAt != nil && !c.ExpiresAt.After(now):
		return errors.New("challenge expired")
	}
	if c.ID == "" {
		c.ID = c.VerifyURL
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultChallengeAttempts
	}
	return nil
}

// CodeVerification runs the two code tools for one conversation; BotName
// names the bot in the code's email.
type CodeVerification struct {
	Store                    VerificationStore
	Mailer                   Mailer
	TenantID, ConversationID string
	BotName                  string
}

// ChallengeVerification runs VERIFY_EXTERNAL_CHALLENGE for one conversation:
// the answer is posted through Client (the SSRF-guarded client), signed
// with Key (the tenant's visitor signing key), naming Visitor, the visitor
// the turn claims (nil for none).
type ChallengeVerification struct {
	Store                    VerificationStore
	Challenge                Challenge
	Client                   *http.Client
	Key                      []byte
	TenantID, ConversationID string
	SessionID                string
	Visitor                  *parley.Visitor
}

// codeHash is the stored form of a code: HMAC-SHA256 keyed with its salt.
func codeHash(salt []byte, code string) []byte {
	mac := hmac.New(sha256.New, salt)
	mac.Write([]byte(code))
	return mac.Sum(nil)
}

// newCode is 6 random digits.
func newCode() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%06d", n.Int64()), nil
}

func (r *Registry) sendCode(ctx context.Context, in map[string]any, ex *Execution) {
	cv := r.deps.Codes
	email, _ := argString(in, "email")
	email = strings.ToLower(email)
	if !emailPattern.MatchString(email) || len(email) > 254 {
		ex.Summary = "That is not an email address: ask the visitor for their email address."
		return
	}
	code, err := newCode()
	salt := make([]byte, 16)
	if err == nil {
		_, err = rand.Read(salt)
	}
	if err != nil {
		ex.Summary, ex.Err = "The code could not be made; try again.", err
		return
	}
	now := r.now()
	wait, err := cv.Store.SaveVerificationCode(ctx, cv.TenantID, cv.ConversationID,
		parley.VerificationCode{Email: email, Hash: codeHash(salt, code), Salt: salt, ExpiresAt: now.Add(CodeTTL)}, now, CodeResendAfter)
	if err != nil {
		ex.Summary, ex.Err = "The code could not be sent because of an error on our side; try again shortly.", err
		return
	}
	if wait > 0 {
		secs := int((wait + time.Second - 1) / time.Second)
		ex.Summary = fmt.Sprintf("A code was sent less than a minute ago: no new code was sent. Ask the visitor to check their inbox (and spam folder), or to ask again in %d seconds.", secs)
		ex.Result = map[string]any{"sent": false, "retryAfterSeconds": secs}
		return
	}
	mctx, cancel := context.WithTimeout(ctx, CodeMailTimeout)
	defer cancel()
	subject := "Your verification code: " + code
	body := fmt.Sprintf("Your code to confirm your email address to %s is:\n\n    %s\n\nIt expires in %d minutes. If you did not ask for it, ignore this email.\n",
		cv.BotName, code, int(CodeTTL/time.Minute))
	if err := cv.Mailer.SendMail(mctx, email, subject, body); err != nil {
		// Not sent: the next request is not throttled by a code nobody got.
		if derr := cv.Store.DeleteVerificationCode(context.WithoutCancel(ctx), cv.TenantID, cv.ConversationID); derr != nil {
			err = errors.Join(err, derr)
		}
		ex.Summary, ex.Err = "The code could not be sent: the mail server did not accept it. Ask the visitor to check the address or to try again later.", err
		ex.Result = map[string]any{"sent": false}
		return
	}
	ex.Success = true
	ex.Summary = fmt.Sprintf("A 6-digit code was sent to %s. Ask the visitor to type it here; it expires in %d minutes.", email, int(CodeTTL/time.Minute))
	ex.Result = map[string]any{"sent": true, "email": email, "expiresInMinutes": int(CodeTTL / time.Minute)}
	ex.Data = map[string]any{"sent": true}
}

func (r *Registry) verifyCode(ctx context.Context, in map[string]any, ex *Execution) {
	cv := r.deps.Codes
	raw, _ := argString(in, "code")
	ex.Input = json.RawMessage(`{"code":"[redacted]"}`) // the tool history keeps no code
	code := strings.Map(func(c rune) rune {
		if c == ' ' || c == '-' {
			return -1
		}
		return c
	}, raw)
	if len(code) != 6 || strings.Trim(code, "0123456789") != "" {
		ex.Summary = "Codes are 6 digits: ask the visitor for the 6-digit code from the email."
		return
	}
	sent, why, err := cv.Store.TryVerificationCode(ctx, cv.TenantID, cv.ConversationID, r.now(), CodeMaxTries)
	if err != nil {
		ex.Summary, ex.Err = "The code could not be checked because of an error on our side; try again shortly.", err
		return
	}
	switch why {
	case parley.CodeTryNone:
		ex.Summary = "No code was sent in this conversation: send one first with " + sendCodeTool + "."
		return
	case parley.CodeTryExpired:
		ex.Summary = "The code expired (codes last 10 minutes): send a new one."
		return
	case parley.CodeTryExhausted:
		ex.Summary = fmt.Sprintf("The %d tries of this code are used up: send a new code.", CodeMaxTries)
		return
	}
	if !hmac.Equal(codeHash(sent.Salt, code), sent.Hash) {
		left := CodeMaxTries - sent.Attempts
		ex.Result = map[string]any{"verified": false, "triesLeft": left}
		if left == 0 {
			ex.Summary = "The code is wrong, and that was the last try: send a new code."
		} else {
			ex.Summary = fmt.Sprintf("The code is wrong; %d tries left.", left)
		}
		return
	}
	v, err := cv.Store.VerifyConversationByCode(ctx, cv.TenantID, cv.ConversationID, sent.Email, r.now())
	if err != nil {
		ex.Summary, ex.Err = "The code is right, but the verification could not be saved because of an error on our side; try again shortly.", err
		return
	}
	ex.Success = true
	ex.Summary = "Verified: the visitor is " + sent.Email + ". What is known about them is available from their next message."
	ex.Result = map[string]any{"verified": true, "email": sent.Email}
	ex.Data = map[string]any{"verified": true, "visitorId": v.ID}
}

func (r *Registry) verifyChallenge(ctx context.Context, in map[string]any, ex *Execution) {
	cv := r.deps.Challenge
	answer, _ := argString(in, "answer")
	ex.Input = json.RawMessage(`{"answer":"[redacted]"}`) // the tool history keeps no answer
	if answer == "" || len(answer) > 1000 {
		ex.Summary = "Ask the visitor the challenge's question and pass their answer (1 to 1000 characters)."
		return
	}
	ok, err := cv.Store.TryVerificationChallenge(ctx, cv.TenantID, cv.ConversationID, cv.Challenge.ID, cv.Challenge.MaxAttempts)
	if err != nil {
		ex.Summary, ex.Err = "The answer could not be checked because of an error on our side; try again shortly.", err
		return
	}
	if !ok {
		ex.Summary = fmt.Sprintf("The %d answers this check allows are used up: the visitor cannot be verified this way in this conversation.", cv.Challenge.MaxAttempts)
		return
	}
	verified, err := cv.post(ctx, answer, r.now())
	if err != nil {
		ex.Summary, ex.Err = "The answer could not be checked: the verification service did not answer properly. Try again later.", err
		return
	}
	if !verified {
		ex.Summary = "The answer is not right."
		ex.Result = map[string]any{"verified": false}
		return
	}
	var visitorID *string
	if cv.Visitor != nil {
		visitorID = &cv.Visitor.ID
	}
	if err := cv.Store.VerifyConversationByChallenge(ctx, cv.TenantID, cv.ConversationID, visitorID, r.now()); err != nil {
		ex.Summary, ex.Err = "The answer is right, but the verification could not be saved because of an error on our side; try again shortly.", err
		return
	}
	ex.Success = true
	ex.Summary = "Verified: the visitor passed the check. What the service knows about them is available from their next message."
	ex.Result = map[string]any{"verified": true}
	ex.Data = map[string]any{"verified": true}
}

// post sends the answer to the challenge's verifyUrl, signed like the
// context webhook, and reads {"verified": bool}.
func (cv *ChallengeVerification) post(ctx context.Context, answer string, now time.Time) (bool, error) {
	q := map[string]any{"challengeId": cv.Challenge.ID, "answer": answer, "conversationId": cv.ConversationID,
		"sessionId": cv.SessionID, "timestamp": now.UTC().Format(time.RFC3339), "visitorId": nil, "externalId": nil, "email": nil}
	// Who the visitor claims to be, unproven until the answer is right: the
	// tenant checks the answer against that person.
	if v := cv.Visitor; v != nil {
		q["visitorId"], q["externalId"], q["email"] = v.ID, v.ExternalID, v.Email
	}
	body, err := json.Marshal(q)
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, ChallengeTimeout)
	defer cancel()
	req, err := outbound.NewSignedPostBody(ctx, cv.Challenge.VerifyURL, ChallengeEvent, cv.Key, now, body)
	if err != nil {
		return false, fmt.Errorf("challenge verifyUrl: %w", err)
	}
	resp, err := cv.Client.Do(req)
	if err != nil {
		return false, fmt.Errorf("challenge verifyUrl: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return false, fmt.Errorf("challenge verifyUrl: reading the answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return false, fmt.Errorf("challenge verifyUrl answered HTTP %d", resp.StatusCode)
	}
	var got struct {
		Verified *bool `json:"verified"`
	}
	if err := json.Unmarshal(raw, &got); err != nil || got.Verified == nil {
		return false, errors.New("challenge verifyUrl: the answer is not a JSON object with a verified boolean")
	}
	return *got.Verified, nil
}

func (r *Registry) now() time.Time {
	if r.deps.Now != nil {
		return r.deps.Now()
	}
	return time.Now()
}
