package web_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/parley/parley/handlers/idempotent"
	"github.com/parley/parley/web/webtest"
)

// The operations that name the Idempotency-Key header in the document are
// exactly those that honour it: the routes of handlers/idempotent, the
// public form's and the chat. Every create (a POST answering 201) but the
// registration of an OAuth client (no tenant, no credential yet) is one.
func TestIdempotencyKeyRoutes(t *testing.T) {
	t.Parallel()
	doc := webtest.LoadOpenAPI(t)
	var documented, creates []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for _, p := range op.Parameters {
				if p.Ref == "#/components/parameters/IdempotencyKey" {
					documented = append(documented, method+" "+path)
				}
			}
			if method == "POST" && path != "/oauth/register" && op.Responses.Status(201) != nil {
				creates = append(creates, method+" "+path)
			}
		}
	}
	want := []string{"POST /chat/{slug}", "POST /form/{slug}"}
	for route := range idempotent.Routes {
		parts := strings.Split(route, "/")
		for i, p := range parts {
			if name, ok := strings.CutPrefix(p, ":"); ok {
				parts[i] = "{" + name + "}"
			}
		}
		want = append(want, "POST "+strings.Join(parts, "/"))
	}
	slices.Sort(documented)
	slices.Sort(want)
	if !slices.Equal(documented, want) {
		t.Errorf("operations naming Idempotency-Key:\n%v\nwant (handlers/idempotent.Routes, the form and the chat):\n%v", documented, want)
	}
	for _, c := range creates {
		if !slices.Contains(want, c) {
			t.Errorf("%s creates (201) but does not honour Idempotency-Key", c)
		}
	}
}
