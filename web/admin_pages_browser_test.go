package web_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/parley/parley/agent/outbound/caldav/caldavtest"
	"github.com/parley/parley/manage"
	"github.com/parley/parley/web/webtest"
)

// uuidPart is a row id in a dashboard path.
var uuidPart = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// TestAdminPagesBrowser visits every dashboard page, signed in, for a
// tenant with data at laptop and phone sizes and for an empty one at phone
// size: nothing scrolls sideways, the Content-Security-Policy refuses
// nothing, and at phone size axe-core finds no serious or critical
// violation. A screenshot of each page with data is kept (ScreenshotDir).
// axe-core checks each distinct markup once (markupSeen): an empty tenant's
// form is the same page as the full tenant's, its empty lists are not.
func TestAdminPagesBrowser(t *testing.T) {
	t.Parallel()
	axe := webtest.AxeScript(t)
	b := webtest.Setup(t)
	b.WithOutbound(t, true, nil) // the calendar server is on the loopback
	cal := caldavtest.Start(t)
	full, empty := b.OwnedTenant(t, "starter"), b.OwnedTenant(t, "starter")
	b.MustDo(t, 200, "PUT", "/tenants/"+full.Slug+"/integrations/calendar", full.Token, webtest.CalendarBody(cal, nil))
	post := func(path string, body map[string]any) string {
		t.Helper()
		st, resp := b.Do(t, "POST", "/tenants/"+full.Slug+path, full.Token, body)
		if st != 201 {
			t.Fatalf("POST %s: %d %v", path, st, resp)
		}
		id, _ := resp["id"].(string)
		if e, ok := resp["corpus"].(map[string]any); ok {
			id, _ = e["id"].(string)
		}
		if id == "" {
			t.Fatalf("POST %s: no id in %v", path, resp)
		}
		return id
	}
	seg := post("/segments", map[string]any{"name": "Wholesale trade buyers", "slug": "wholesale", "systemPrompt": "Help trade buyers.",
		"welcomeMessage": "Hello!", "conversationStarters": []any{map[string]any{"text": "Bulk prices?", "emoji": "📦"}},
		"formConfig": map[string]any{"enabled": true, "intent": "lead", "fields": []any{
			map[string]any{"name": "email", "label": "Email", "type": "email", "required": true}}}})
	entry := post("/corpus", map[string]any{"title": "Opening hours and holiday closures of the Lyon workshop",
		"content": "The shop opens at nine every weekday. https://bikes.example/a-very-long-address/that-should-wrap-on-a-phone-screen-instead-of-scrolling"})
	post("/synonyms", map[string]any{"terms": []string{"opening hours", "when are you open", "schedule of the Lyon workshop on public holidays"}})
	product := post("/products", map[string]any{"name": "Cargo bike with a very long descriptive name", "isActive": true})
	tool := post("/tools", map[string]any{"name": "Contact form", "description": "Collect a lead", "type": "SUBMIT_FORM",
		"config": map[string]any{"fields": []any{map[string]any{"name": "full_name", "label": "Name", "type": "text", "required": true}}}})
	visitor := post("/visitors", map[string]any{"email": "ada.lovelace.with.a.long.address@example.com", "displayName": "Ada"})
	if st, resp := b.Do(t, "POST", "/form/"+full.Slug, "", map[string]any{"segment": "wholesale",
		"fields": map[string]any{"email": "lead@example.com"}}); st != 201 && st != 200 {
		t.Fatalf("form: %d %v", st, resp)
	}
	var submission string
	webtest.MustStep(t, "reading the submission", b.DB.Pool().QueryRow(t.Context(),
		`SELECT id::text FROM submissions WHERE tenant_id = $1`, full.ID).Scan(&submission))

	if st, resp := b.Do(t, "PUT", "/tenants/"+full.Slug+"/integrations/payments", full.Token, map[string]any{"secretKey": webtest.StripeTestKey,
		"currency": "EUR", "defaultAmount": 49.5, "defaultDescription": "Workshop deposit"}); st != 200 {
		t.Fatalf("payments: %d %v", st, resp)
	}
	// Integrations with its states set: a context webhook and a mode.
	b.Exec(t, `UPDATE tenants SET visitor_context_url = 'https://crm.example.com/parley/context', visitor_auth_mode = 'otp' WHERE id = $1`, full.ID)
	inbox := webtest.SeedInboxOf(t, b, full)
	webtest.ConnectApp(t, b, full)
	// The Team page with a member and an invitation waiting.
	b.AddMember(t, full, "agent")
	fullTenant, err := b.DB.TenantByID(t.Context(), full.ID)
	webtest.MustStep(t, "reading the tenant", err)
	_, _, err = b.Srv.Base.Manage.Invite(t.Context(), fullTenant, manage.InviteInput{Email: "invited.person.with.a.long.address@example.com", Role: "admin"}, "", nil, b.Srv.Base.Clock())
	webtest.MustStep(t, "inviting", err)

	pages := []string{"", "/conversations", "/analytics", "/settings", "/settings/widget", "/settings/developer", "/settings/team", "/tokens", "/segments", "/segments/new", "/corpus", "/corpus/new", "/corpus/synonyms", "/corpus/embeddings",
		"/tools", "/tools/new", "/products", "/products/new", "/visitors", "/submissions", "/integrations", "/mcp-tools", "/voice", "/integrations/payments", "/integrations/calendar", "/webhooks", "/test-chat", "/script-chat", "/connected-apps", "/members", "/plan", "/account", "/account/two-factor", "/security", "/audit"}
	withData := append(append([]string(nil), pages...), "/segments/"+seg, "/corpus/"+entry, "/products/"+product,
		"/tools/"+tool, "/visitors/"+visitor, "/submissions/"+submission, "/conversations/"+inbox.Ada.ID, "/conversations/"+inbox.Escalated.ID)

	phone, laptop := webtest.AdminViewports[1], webtest.AdminViewports[0]
	var seen markupSeen
	for _, ten := range []struct {
		name  string
		t     webtest.Tenant
		pages []string
	}{{"data", full, withData}, {"empty", empty, pages}} {
		// A tab takes a share of the pages, ten at most: axe-core takes
		// about half a second of Chromium's CPU a page, and 33 pages in one
		// tab ran past the tab's minute on a loaded machine.
		tabs := (len(ten.pages) + 9) / 10
		share := (len(ten.pages) + tabs - 1) / tabs
		for n, part := range slices.Collect(slices.Chunk(ten.pages, share)) {
			t.Run(fmt.Sprintf("%s/%d", ten.name, n+1), func(t *testing.T) {
				t.Parallel()
				ctx := webtest.BrowserTab(t)
				webtest.WatchCSP(ctx, t)
				resize := func(vp webtest.Viewport) {
					webtest.MustStep(t, "resizing to the "+vp.Name, chromedp.Do(ctx, chromedp.EmulateViewport(vp.Width, vp.Height)))
				}
				// checkWidth: nothing scrolls sideways at the tab's size.
				checkWidth := func(name string) {
					if over := webtest.MustRunStep(ctx, t, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth - innerWidth`)); over > 0 {
						wide := webtest.MustRunStep(ctx, t, "widest", chromedp.Evaluate[string](`[...document.querySelectorAll('main *')]
						.filter(e => e.getBoundingClientRect().right > innerWidth + 1)
						.slice(0, 3).map(e => e.tagName + (e.id ? '#' + e.id : '') + '.' + e.className).join(', ')`))
						t.Errorf("%s scrolls sideways by %d px (%s)", name, over, wide)
					}
				}
				resize(phone)
				for i, p := range part {
					name := fmt.Sprintf("%s %s /admin%s", ten.name, phone.Name, p)
					if i == 0 {
						webtest.OpenSignedIn(ctx, t, b, ten.t, "/admin"+p)
					} else {
						webtest.MustStep(t, "opening "+name, chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin"+p)))
					}
					webtest.WaitUntil(ctx, t, name+" loaded", `document.readyState === 'complete' && !!document.querySelector('main h1')`)
					checkWidth(name)
					// axe on the phone, where every page is checked (with data and
					// empty): the laptop shows the same content in a wider grid.
					if seen.first(ctx, t) {
						for _, v := range webtest.AxeViolations(ctx, t, axe) {
							t.Errorf("%s: axe: %s", name, v)
						}
					} else {
						t.Logf("%s: the markup of a page already checked by axe-core", name)
					}
					for _, v := range webtest.CSPViolations(ctx, t) {
						t.Errorf("%s: refused by the Content-Security-Policy: %s", name, v)
					}
					if ten.name != "data" {
						// Empty pages hold less than full ones, and the laptop's
						// wide layout is the forgiving one: the phone is checked.
						continue
					}
					// Detail pages by their kind, not their row's id, so that
					// each run overwrites the last.
					webtest.SaveScreenshot(ctx, t, "admin "+uuidPart.ReplaceAllString(name, "detail"))
					// The same page on a laptop: the viewport widened, as a
					// window is, rather than the page loaded again (a load and
					// its sign-in cost Chromium more than the layout).
					resize(laptop)
					name = fmt.Sprintf("%s %s /admin%s", ten.name, laptop.Name, p)
					checkWidth(name)
					webtest.SaveScreenshot(ctx, t, "admin "+uuidPart.ReplaceAllString(name, "detail"))
					resize(phone)
				}
			})
		}
	}
}

// markupSeen holds the markups of the pages axe-core has checked, as
// hashes of their main content's skeleton: each element's tag, classes,
// style, role, type and the names of its other attributes, and whether it
// holds text. What axe-core judges (contrast, names, labels, landmarks)
// follows from these; the ids, links and words of one tenant's rows do not
// change it. The navigation around it differs between the two tenants
// (its counts), and each tenant's is checked on its pages of their own.
type markupSeen struct {
	mu     sync.Mutex
	hashes map[[32]byte]bool
}

// first reports whether the tab's page has a markup not seen before, and
// records it.
func (m *markupSeen) first(ctx context.Context, t *testing.T) bool {
	t.Helper()
	skeleton := webtest.MustRunStep(ctx, t, "markup", chromedp.Evaluate[string](`[...document.querySelectorAll('main, main *')].map(e =>
		[e.tagName, e.className, e.getAttribute('style') || '', e.getAttribute('role') || '', e.getAttribute('type') || '',
		 [...e.attributes].map(a => a.name).sort().join(' '),
		 [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim() !== '')].join('|')).join('\n')`))
	h := sha256.Sum256([]byte(skeleton))
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hashes[h] {
		return false
	}
	if m.hashes == nil {
		m.hashes = map[[32]byte]bool{}
	}
	m.hashes[h] = true
	return true
}

// axeColorRules are axe-core's rules that judge colours: all a change of
// colour scheme can break.
var axeColorRules = []string{"color-contrast", "link-in-text-block"}

// TestAdminPagesDarkBrowser: with the system set to dark, the dashboard
// turns dark and axe-core's colour rules still find no serious or critical
// violation on the pages that hold every kind of element (the other rules
// judge what the scheme does not change, checked by TestAdminPagesBrowser).
func TestAdminPagesDarkBrowser(t *testing.T) {
	t.Parallel()
	axe := webtest.AxeScript(t)
	b := webtest.Setup(t)
	ten := b.OwnedTenant(t, "starter")
	if st, resp := b.Do(t, "POST", "/tenants/"+ten.Slug+"/corpus", ten.Token, map[string]any{"title": "Hours", "content": "Open at nine."}); st != 201 {
		t.Fatalf("corpus: %d %v", st, resp)
	}
	if st, resp := b.Do(t, "PUT", "/tenants/"+ten.Slug+"/segments/default", ten.Token, map[string]any{"formConfig": map[string]any{"enabled": true,
		"intent": "lead", "fields": []any{map[string]any{"name": "email", "label": "Email", "type": "email", "required": true}}}}); st != 200 {
		t.Fatalf("lead form: %d %v", st, resp)
	}
	if st, resp := b.Do(t, "POST", "/form/"+ten.Slug, "", map[string]any{"fields": map[string]any{"email": "lead@example.com"}}); st != 201 && st != 200 {
		t.Fatalf("form: %d %v", st, resp)
	}
	var submission string
	webtest.MustStep(t, "reading the submission", b.DB.Pool().QueryRow(t.Context(), `SELECT id::text FROM submissions WHERE tenant_id = $1`, ten.ID).Scan(&submission))
	ctx := webtest.BrowserTab(t)
	webtest.EmulateMedia(ctx, t, &emulation.MediaFeature{Name: "prefers-color-scheme", Value: "dark"})
	for i, p := range []string{"", "/settings", "/settings/developer", "/segments", "/corpus", "/tools/new", "/submissions", "/submissions/" + submission, "/tokens", "/test-chat", "/webhooks"} {
		name := "dark /admin" + p
		if i == 0 {
			webtest.OpenSignedIn(ctx, t, b, ten, "/admin"+p)
		} else {
			webtest.MustStep(t, "opening "+name, chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin"+p)))
		}
		webtest.WaitUntil(ctx, t, name+" loaded", `document.readyState === 'complete' && !!document.querySelector('main h1')`)
		if bg := webtest.MustRunStep(ctx, t, "background", chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`)); bg != "rgb(15, 17, 21)" {
			t.Errorf("%s: page background %s, want the dark one", name, bg)
		}
		for _, v := range webtest.AxeRuleViolations(ctx, t, axe, axeColorRules) {
			t.Errorf("%s: axe: %s", name, v)
		}
	}
	webtest.SaveScreenshot(ctx, t, "admin dark webhooks")
}

// TestAdminPhoneMenu: on a phone the navigation folds behind a Menu button
// that opens it; the skip link leads past it to the page's content.
func TestAdminPhoneMenu(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.OwnedTenant(t, "starter")
	ctx := webtest.BrowserTab(t)
	webtest.MustStep(t, "resizing", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/segments")
	visible := `(() => { const a = document.querySelector('nav a[href="/admin/corpus"]'); return !!a && a.getClientRects().length > 0; })()`
	if webtest.MustRunStep(ctx, t, "closed", chromedp.Evaluate[bool](visible)) {
		t.Error("the navigation takes the phone's screen before Menu is pressed")
	}
	webtest.MustStep(t, "opening the menu", chromedp.Do(ctx, chromedp.Click(chromedp.CSS(".menu-toggle"))))
	if !webtest.MustRunStep(ctx, t, "open", chromedp.Evaluate[bool](visible)) {
		t.Error("Menu did not show the navigation")
	}
	if got := webtest.MustRunStep(ctx, t, "expanded", chromedp.Evaluate[string](`document.querySelector('.menu-toggle').getAttribute('aria-expanded')`)); got != "true" {
		t.Errorf("aria-expanded = %q after opening", got)
	}
	webtest.MustStep(t, "following the skip link", chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('.skip-link').focus()`),
		chromedp.KeyEvent("\r")))
	webtest.WaitUntil(ctx, t, "focus on the content", `document.activeElement === document.getElementById('main')`)
	// On a laptop the navigation is always there, with no Menu button.
	webtest.MustStep(t, "resizing", chromedp.Do(ctx, chromedp.EmulateViewport(1366, 900), chromedp.Navigate(b.TS.URL+"/admin/segments")))
	if !webtest.MustRunStep(ctx, t, "laptop", chromedp.Evaluate[bool](visible+` && getComputedStyle(document.querySelector('.menu-toggle')).display === 'none'`)) {
		t.Error("on a laptop the navigation is hidden or the Menu button shown")
	}
}

// leavePage navigates to url, accepting the "leave the page?" question if
// the page asks it, and reports whether it did.
func leavePage(ctx context.Context, t *testing.T, url string) bool {
	t.Helper()
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	asked := make(chan page.DialogType, 1)
	listen, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		for ev, err := range dialogs {
			if err != nil || listen.Err() != nil {
				return
			}
			asked <- ev.Type
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
			return
		}
	}()
	webtest.MustStep(t, "leaving for "+url, chromedp.Do(ctx, chromedp.Navigate(url)))
	select {
	case typ := <-asked:
		if typ != page.DialogTypeBeforeunload {
			t.Errorf("leaving the page asked a %s dialog", typ)
		}
		return true
	default:
		return false
	}
}

// TestAdminRequiredFieldsBrowser: a form sent with a required field left
// empty, or a number past its limits, is stopped in the browser, the field
// says so and takes the focus, and nothing reaches the server; put right,
// it goes.
func TestAdminRequiredFieldsBrowser(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.OwnedTenant(t, "starter")
	ctx := webtest.BrowserTab(t)
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/segments/new")
	webtest.MustStep(t, "opening a new segment", chromedp.Do(ctx,
		webtest.KeyIn(chromedp.ID("systemPrompt"), "Help trade buyers."),
		chromedp.Click(chromedp.ID("save-segment"))))
	webtest.WaitUntil(ctx, t, "the note on the empty name", `document.getElementById('check-name')?.innerText === 'Fill this in: it is required.'`)
	if got := webtest.MustRunStep(ctx, t, "focus", chromedp.Evaluate[string](`document.activeElement.id + ' ' + document.getElementById('name').getAttribute('aria-invalid') + ' ' + location.pathname`)); got != "name true /admin/segments/new" {
		t.Errorf("focus, aria-invalid and page = %q", got)
	}
	if n := b.Count(t, `SELECT count(*) FROM segments WHERE tenant_id = $1`, ten.ID); n != 1 {
		t.Errorf("%d segments: the empty form reached the server", n)
	}
	webtest.MustStep(t, "filling the name", chromedp.Do(ctx, webtest.KeyIn(chromedp.ID("name"), "Wholesale")))
	if status := webtest.SubmitForm(ctx, t, "#save-segment"); status != http.StatusOK {
		t.Fatalf("saving: %d", status)
	}
	if n := b.Count(t, `SELECT count(*) FROM segments WHERE tenant_id = $1`, ten.ID); n != 2 {
		t.Errorf("%d segments after saving a filled form, want 2", n)
	}

	// A number past its limits: a quote valid for 400 days.
	webtest.MustStep(t, "opening a new quote tool", chromedp.Do(ctx, chromedp.Navigate(b.TS.URL+"/admin/tools/new?type=GENERATE_QUOTE"),
		webtest.KeyIn(chromedp.ID("name"), "Quotes"), webtest.KeyIn(chromedp.ID("description"), "Prices a repair."),
		chromedp.SetValue(chromedp.ID("validityDays"), "400"),
		chromedp.Click(chromedp.ID("save-tool"))))
	webtest.WaitUntil(ctx, t, "the note on the validity", `document.getElementById('check-validityDays')?.innerText === 'Use a number from 1 to 365.'`)
	if got := webtest.MustRunStep(ctx, t, "focus", chromedp.Evaluate[string](`document.activeElement.id + ' ' + location.pathname`)); got != "validityDays /admin/tools/new" {
		t.Errorf("focus and page = %q", got)
	}
	if n := b.Count(t, `SELECT count(*) FROM tools WHERE tenant_id = $1`, ten.ID); n != 0 {
		t.Errorf("%d tools: the form past its limits reached the server", n)
	}
	webtest.MustStep(t, "putting it right", chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("validityDays"), "30"),
		chromedp.SetValue(chromedp.ID("currency"), "EUR"), chromedp.SetValue(chromedp.ID("item-0-name"), "Repair"),
		chromedp.SetValue(chromedp.ID("item-0-unitPrice"), "40"), chromedp.Click(chromedp.ID("save-tool"))))
	webtest.WaitUntil(ctx, t, "the form sent", `location.pathname === '/admin/tools'`)
	if got := webtest.MustRunStep(ctx, t, "where the form went", chromedp.Evaluate[string](`location.pathname + ' ' + (document.querySelector('#form-errors')?.innerText || '') + Array.from(document.querySelectorAll('.field-error')).map(e => e.id + ':' + e.innerText).join(' | ')`)); got != "/admin/tools " {
		t.Errorf("after putting it right: %q", got)
	}
}

// TestAdminCSPBrowser: the dashboard's policy refuses inline scripts and
// event attributes, and WatchCSP sees the refusal, as the page visits of
// TestAdminPagesBrowser rely on.
func TestAdminCSPBrowser(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.OwnedTenant(t, "starter")
	ctx := webtest.BrowserTab(t)
	webtest.WatchCSP(ctx, t)
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin")
	webtest.WaitUntil(ctx, t, "the overview", `document.readyState === 'complete' && !!document.querySelector('main h1')`)
	if v := webtest.CSPViolations(ctx, t); len(v) != 0 {
		t.Fatalf("violations before any inline script: %v", v)
	}
	_, err := chromedp.Run(ctx, chromedp.Evaluate[any](`
		document.body.insertAdjacentHTML('beforeend', '<img src="/static/none.png" onerror="window.__ran = 1">');
		const s = document.createElement('script'); s.textContent = 'window.__ran = 2'; document.body.append(s); 0`))
	webtest.MustStep(t, "adding inline scripts", err)
	webtest.WaitUntil(ctx, t, "two refusals", `window.__csp.length >= 2`)
	if ran := webtest.MustRunStep(ctx, t, "ran", chromedp.Evaluate[bool](`window.__ran !== undefined`)); ran {
		t.Error("an inline script ran")
	}
}
