package handlerstest

import (
	"reflect"
	"testing"
)

// MaxMethods is the most exported methods a handler type's method set may
// hold, the promoted ones (Base's) included: past it a handler is split into
// areas.
const MaxMethods = 40

// CheckMethodSets fails t when handler (a pointer to a surface's Handler, a
// struct of one pointer a handler area) or one of its areas has more than
// MaxMethods exported methods in its method set. The areas are read from
// the struct's fields, so an area added to the Handler, which web's route
// table reaches it through, is measured too.
func CheckMethodSets(t *testing.T, handler any) {
	t.Helper()
	typ := reflect.TypeOf(handler)
	if typ.Kind() != reflect.Pointer || typ.Elem().Kind() != reflect.Struct {
		t.Fatalf("%v: want a pointer to the surface's Handler struct", typ)
	}
	types := []reflect.Type{typ}
	for f := range typ.Elem().Fields() {
		if f.Type.Kind() != reflect.Pointer {
			t.Errorf("%s.%s is a %v, not a pointer to a handler area", typ.Elem().Name(), f.Name, f.Type)
			continue
		}
		types = append(types, f.Type)
	}
	for _, typ := range types {
		name := typ.Elem().Name()
		if n := typ.NumMethod(); n > MaxMethods {
			t.Errorf("%s has %d exported methods (its own and promoted), more than %d: split it into areas", name, n, MaxMethods)
		} else {
			t.Logf("%s: %d exported methods", name, n)
		}
	}
}
