package auditing_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/accounts"
	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/auditing"
	"github.com/parley/parley/web/webtest"
)

// A dashboard route refused to a member's role (what the role groups
// answer) is recorded once, as a refusal, whether it is returned as an
// error or also reported with RecordDenied; a page answered 403 by its
// handler too. The recorder's changes are web's tests (audit_log_test.go).
func TestRecordRefusals(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.OwnedTenant(t, "starter")
	tenant := b.TenantNow(t, ten.Slug)
	r := auditing.New(b.Srv.Base)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	request := func(path string) echo.Context {
		req := httptest.NewRequest(http.MethodPost, path, nil)
		c := echo.New().NewContext(req, httptest.NewRecorder())
		c.SetPath(path)
		handlers.StartScope(c, logger, "req")
		handlers.SetAdmin(c, &handlers.AdminContext{User: accounts.User{ID: "u-agent", Email: "agent@example.com"}, Tenant: tenant})
		c.SetRequest(c.Request().WithContext(audit.WithActor(c.Request().Context(),
			audit.Actor{Kind: audit.ActorPerson, ID: "u-agent", Name: "agent@example.com"})))
		return c
	}

	c := request("/admin/tokens")
	refuse := r.Record(func(c echo.Context) error {
		r.RecordDenied(c, "API tokens")
		return &parley.Error{Kind: parley.KindForbidden, Message: "Only an owner can do this."}
	})
	if err := refuse(c); parley.ErrorKind(err) != parley.KindForbidden {
		t.Fatalf("err = %v", err)
	}
	page := r.Record(func(c echo.Context) error { return c.String(http.StatusForbidden, "no") })
	if err := page(request("/admin/settings")); err != nil {
		t.Fatal(err)
	}
	ok := r.Record(func(c echo.Context) error { return c.String(http.StatusOK, "read") })
	if err := ok(request("/admin/anything")); err != nil {
		t.Fatal(err)
	}

	got, err := b.DB.ListAudit(t.Context(), ten.ID, audit.Filter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Entries) != 2 {
		t.Fatalf("entries: %+v", got.Entries)
	}
	settings, tokens := got.Entries[0], got.Entries[1]
	if tokens.Action != audit.ActionAccessDenied || !tokens.Denied || tokens.Target != "API tokens" ||
		tokens.Actor != (audit.Actor{Kind: audit.ActorPerson, ID: "u-agent", Name: "agent@example.com"}) {
		t.Errorf("the tokens' refusal: %+v", tokens)
	}
	if settings.Target != "General settings (POST /admin/settings)" || !settings.Denied || settings.Details["via"] != audit.ViaDashboard {
		t.Errorf("the settings' refusal: %+v", settings)
	}
}
