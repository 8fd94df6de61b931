package resource

import "github.com/parley/parley"

// FieldError is a validation error of one argument.
func FieldError(field, problem string) error {
	return &parley.Error{Kind: parley.KindInvalid, Message: "Validation failed", Details: map[string]string{field: problem}}
}
