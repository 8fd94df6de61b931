package integrations

import (
	"testing"

	"github.com/parley/parley/auth"
	"github.com/parley/parley/views"
)

// Every scope an owner can grant is shown in words.
func TestScopeLabels(t *testing.T) {
	for _, s := range auth.RESTScopes {
		if views.ScopeLabel(s) == s {
			t.Errorf("scope %s has no label", s)
		}
	}
}
