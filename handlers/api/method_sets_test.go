package api

import (
	"testing"

	"github.com/parley/parley/handlers/handlerstest"
)

// No handler type of the REST API grows past handlerstest.MaxMethods
// exported methods, Base's included.
func TestMethodSets(t *testing.T) {
	t.Parallel()
	handlerstest.CheckMethodSets(t, &Handler{})
}
