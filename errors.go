package parley

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Kind classifies an application error; the HTTP layer maps each kind to one status.
type Kind int

// Error kinds, one per way a request can fail for a reason the caller can act on.
const (
	KindInternal Kind = iota
	KindInvalid
	KindUnauthorized
	KindForbidden
	KindNotFound
	KindConflict
	KindNotActivated
	KindRateLimited
	KindTooLarge
	// KindUnprocessable: well-formed request whose subject cannot be used (a
	// fetched page of an unsupported type, empty, or too long).
	KindUnprocessable
	// KindUpstream: a service Parley depends on for the answer (the language
	// model) failed; the message says which and is safe to show.
	KindUpstream
	// KindUnavailable: the service is not configured for what was asked
	// (the operator's account at an outside service is missing).
	KindUnavailable
	// KindPreconditionFailed: a conditional write (If-Match) of a resource
	// that changed since the client read it; nothing was written.
	KindPreconditionFailed
)

// Error is the one application error type. Message is safe to show to callers;
// Code is the spec's machine code (NOT_ACTIVATED, LIMIT_REACHED, ...), Details
// anything structured that helps the caller fix the request.
type Error struct {
	Kind    Kind
	Message string
	Code    string
	Details any
}

func (e *Error) Error() string { return e.Message }

// Errorf returns an Error of the given kind with a formatted message.
func Errorf(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// ErrorKind returns the kind of err, KindInternal for errors that are not ours.
func ErrorKind(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// FieldErrors maps a field name to what is wrong with it. It is the details
// payload of validation errors.
type FieldErrors map[string]string

// Copy is a new set of problems holding fe's (none when fe is nil): an
// input's Check starts from the problems its surface met reading it, so
// that they are reported first.
func (fe FieldErrors) Copy() FieldErrors {
	c := make(FieldErrors, len(fe))
	maps.Copy(c, fe)
	return c
}

// Sentence is the problems in one sentence, each after its field's name,
// fields in order: "limit must be an integer between 1 and 100; search
// is too long".
func (fe FieldErrors) Sentence() string {
	fields := slices.Sorted(maps.Keys(fe))
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f + " " + fe[f]
	}
	return strings.Join(parts, "; ")
}

// Add records the first problem found with a field.
func (fe FieldErrors) Add(field, msg string) {
	if _, ok := fe[field]; !ok {
		fe[field] = msg
	}
}

// Err returns nil when there is no problem, else an invalid-kind Error carrying the fields.
func (fe FieldErrors) Err() error {
	if len(fe) == 0 {
		return nil
	}
	return &Error{Kind: KindInvalid, Message: "Validation failed", Details: map[string]string(fe)}
}
