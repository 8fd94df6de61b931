package parley

import (
	"bytes"
	"encoding/json"
)

// Opt is a field of a partial update: Set when the caller sent it, Null when
// the caller sent JSON null (clear the value).
type Opt[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// Some returns a set, non-null Opt.
func Some[T any](v T) Opt[T] { return Opt[T]{Set: true, Value: v} }

// UnmarshalJSON is only called for fields present in the body.
func (o *Opt[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		o.Null = true
		var zero T
		o.Value = zero
		return nil
	}
	return json.Unmarshal(b, &o.Value)
}

// Ptr returns nil when unset or null, else a pointer to the value; it is how an
// Opt becomes a nullable column value.
func (o Opt[T]) Ptr() *T {
	if !o.Set || o.Null {
		return nil
	}
	v := o.Value
	return &v
}
