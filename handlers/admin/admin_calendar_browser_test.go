package admin_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/agent/outbound/caldav/caldavtest"
	"github.com/parley/parley/web/webtest"
)

// The calendar page in Chromium: the owner connects the in-process CalDAV
// server (a wrong password first, refused on the password field), tests
// the connection and sees the next free slots in words, and disconnects.
// The password is never shown.
func TestAdminCalendarBrowser(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	b.WithOutbound(t, true, nil)
	cal := caldavtest.Start(t)
	ten := b.OwnedTenant(t, "starter")
	b.MustDo(t, 200, "PUT", "/tenants/"+ten.Slug, ten.Token, map[string]any{"timezone": "Europe/Paris"})
	ctx := webtest.BrowserTab(t)
	webtest.WatchCSP(ctx, t)
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/integrations/calendar")

	webtest.MustStep(t, "filling the form", chromedp.Do(ctx,
		webtest.FillField("serverUrl", cal.URL),
		webtest.FillField("username", cal.Username),
		webtest.FillField("password", "wrong-password"),
	))
	if msg := webtest.MustRunStep(ctx, t, "status", chromedp.Text(chromedp.ID("calendar-not-connected"))); !strings.Contains(msg, "No calendar is connected") {
		t.Errorf("status = %q", msg)
	}
	if status := webtest.SubmitForm(ctx, t, "#save-calendar"); status != http.StatusUnprocessableEntity {
		t.Fatalf("wrong password: status %d", status)
	}
	if msg := webtest.MustRunStep(ctx, t, "password error", chromedp.Text(chromedp.ID("err-password"))); !strings.Contains(msg, "refused the username or password") {
		t.Errorf("password error = %q", msg)
	}
	webtest.MustStep(t, "retyping", chromedp.Do(ctx, webtest.FillField("password", cal.Password),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('open_saturday').checked = true`)))
	if status := webtest.SubmitForm(ctx, t, "#save-calendar"); status != http.StatusOK {
		t.Fatalf("connecting: status %d", status)
	}
	if msg := webtest.MustRunStep(ctx, t, "status", chromedp.Text(chromedp.ID("calendar-connected"))); !strings.Contains(msg, caldavtest.CalendarName) {
		t.Errorf("status = %q", msg)
	}
	conn, err := b.DB.CalendarConnector(context.Background(), ten.ID)
	if err != nil || conn == nil || conn.OfficeHours["saturday"].Start != "09:00" || len(conn.OfficeHours) != 6 {
		t.Fatalf("stored %+v (%v)", conn, err)
	}

	webtest.MustStep(t, "testing", chromedp.Do(ctx, chromedp.Click(chromedp.ID("test-calendar"))))
	webtest.WaitUntil(ctx, t, "the slots", `document.querySelectorAll('#calendar-slots li').length === 5`)
	result := webtest.MustRunStep(ctx, t, "result", chromedp.Text(chromedp.ID("calendar-test-result")))
	paris, _ := time.LoadLocation("Europe/Paris")
	first := time.Now().Add(2 * time.Hour).In(paris)
	if !strings.Contains(result, "30-minute times") || !strings.Contains(result, "Europe/Paris") || !strings.Contains(result, "–") ||
		!strings.Contains(result, first.AddDate(0, 0, 7).Format("2006")) {
		t.Errorf("result = %q", result)
	}
	html := webtest.MustRunStep(ctx, t, "page", chromedp.OuterHTML(chromedp.CSS("html")))
	if strings.Contains(html, cal.Password) {
		t.Error("the password is shown")
	}

	cal.Status.Store(503)
	webtest.MustStep(t, "testing again", chromedp.Do(ctx, chromedp.Click(chromedp.ID("test-calendar"))))
	webtest.WaitUntil(ctx, t, "the failure", `(document.getElementById('calendar-test-result') || {}).dataset?.state === 'failed'`)
	if msg := webtest.MustRunStep(ctx, t, "failure", chromedp.Text(chromedp.ID("calendar-test-result"))); !strings.Contains(msg, "HTTP 503") {
		t.Errorf("failure = %q", msg)
	}
	cal.Status.Store(0)

	if msg := webtest.ClickAndConfirm(ctx, t, "#remove-calendar"); !strings.Contains(msg, "Disconnect the calendar?") {
		t.Errorf("confirmation = %q", msg)
	}
	webtest.WaitUntil(ctx, t, "the page", `document.readyState === 'complete' && !!document.getElementById('calendar-not-connected')`)
	if conn, _ := b.DB.CalendarConnector(context.Background(), ten.ID); conn != nil {
		t.Errorf("still connected: %+v", conn)
	}
	for _, v := range webtest.CSPViolations(ctx, t) {
		t.Errorf("refused by the Content-Security-Policy: %s", v)
	}
}
