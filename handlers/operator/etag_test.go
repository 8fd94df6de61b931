package operator_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/parley/parley/web/webtest"
)

// planRequest sends an operator request with the extra headers and returns
// the status and the ETag of the answer.
func planRequest(t *testing.T, b *webtest.Bundle, method, path, body string, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, b.TS.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+operatorToken)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := b.TS.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("ETag")
}

// TestOperatorPlanIfMatch: the tenant's plan answers with an ETag of its
// plan and seats; a change under a stale If-Match gets 412 and leaves them
// as they were; one under the current tag is made and answers a new tag;
// the tag does not move with usage.
func TestOperatorPlanIfMatch(t *testing.T) {
	t.Parallel()
	b := webtest.SetupEnv(t, operatorEnv())
	ten := b.NewTenant(t, "starter")
	path := "/operator/tenants/" + ten.Slug
	st, e1 := planRequest(t, b, "GET", path, "", nil)
	if st != http.StatusOK || len(e1) != 34 {
		t.Fatalf("GET: %d ETag %q", st, e1)
	}
	st, e2 := planRequest(t, b, "PUT", path+"/plan", `{"plan":"builder"}`, map[string]string{"If-Match": e1})
	if st != http.StatusOK || e2 == "" || e2 == e1 {
		t.Fatalf("PUT with the current tag: %d ETag %q (was %q)", st, e2, e1)
	}
	status, out, _ := b.Request(t, "PUT", path+"/plan", map[string]string{"Authorization": "Bearer " + operatorToken,
		"If-Match": e1}, `{"plan":"scale","botSeats":3}`)
	if status != http.StatusPreconditionFailed || out["code"] != "PRECONDITION_FAILED" {
		t.Errorf("PUT with a stale tag: %d %v", status, out)
	}
	_, got := op(t, b, "GET", path, "")
	if got["plan"] != "builder" || got["botSeats"] != float64(0) {
		t.Errorf("after the stale PUT: plan %v, seats %v; want builder, 0", got["plan"], got["botSeats"])
	}
	if _, now := planRequest(t, b, "GET", path, "", nil); now != e2 {
		t.Errorf("ETag after the stale PUT: %q, want %q", now, e2)
	}
	if st, _ := planRequest(t, b, "PUT", path+"/plan", `{"botSeats":1}`, map[string]string{"If-Match": "*"}); st != http.StatusOK {
		t.Errorf("If-Match *: %d", st)
	}
}
