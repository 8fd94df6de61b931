package admin_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/parley/parley"
	"github.com/parley/parley/web/webtest"
)

// fakeNotifications stands in for the browser's Notification API, which a
// headless browser does not show: permission starts undecided, the owner's
// click grants it, and each notification is kept; as in a browser, both
// outlive the page (kept in the tab's storage).
const fakeNotifications = `window.Notification = function (title, o) {
	const notes = JSON.parse(sessionStorage.getItem('fake-notes') || '[]');
	notes.push(title + ': ' + o.body);
	sessionStorage.setItem('fake-notes', JSON.stringify(notes));
};
Object.defineProperty(window.Notification, 'permission', { get: () => sessionStorage.getItem('fake-permission') || 'default' });
window.Notification.requestPermission = () => { sessionStorage.setItem('fake-permission', 'granted'); return Promise.resolve('granted'); };`

// clickWhenReady clicks sel once htmx is between requests and has taken
// the button's form (a button swapped in and clicked at once would submit
// its form plainly).
func clickWhenReady(ctx context.Context, t *testing.T, sel string) {
	t.Helper()
	webtest.WaitUntil(ctx, t, "htmx to take "+sel, fmt.Sprintf(`(() => {
		const b = document.querySelector(%q);
		if (!b || document.querySelector('.htmx-request, .htmx-settling, .htmx-swapping')) return false;
		const f = b.closest('[hx-post]');
		return !f || !!f['htmx-internal-data'];
	})()`, sel))
	webtest.MustStep(t, "clicking "+sel, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel))))
}

// stateIs waits for the conversation's state to read want.
func stateIs(ctx context.Context, t *testing.T, want string) {
	t.Helper()
	webtest.WaitUntil(ctx, t, "the state "+want, `(document.querySelector('#conversation-state .badge')?.textContent || '').trim() === `+webtest.JSString(want))
}

// axeAtBothSizes runs axe-core on the tab's page at the laptop's and the
// phone's sizes, and checks the phone does not scroll sideways.
func axeAtBothSizes(ctx context.Context, t *testing.T, axe []byte, name string) {
	t.Helper()
	for _, vp := range webtest.AdminViewports {
		webtest.MustStep(t, "resizing", chromedp.Do(ctx, chromedp.EmulateViewport(vp.Width, vp.Height)))
		for _, v := range webtest.AxeViolations(ctx, t, axe) {
			t.Errorf("%s, %s: axe: %s", name, vp.Name, v)
		}
		if over := webtest.MustRunStep(ctx, t, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth - innerWidth`)); over > 0 {
			t.Errorf("%s, %s: scrolls sideways by %d px", name, vp.Name, over)
		}
		webtest.SaveScreenshot(ctx, t, name+" "+vp.Name)
	}
}

// TestBrowserTakeover: the owner sees a visitor waiting, opens the
// conversation, takes it over and replies with the keyboard; the visitor's
// next message appears without a reload; they hand it back and close it.
// A conversation escalated meanwhile is notified.
func TestBrowserTakeover(t *testing.T) {
	t.Parallel()
	axe := webtest.AxeScript(t)
	b := webtest.Setup(t)
	ten := b.OwnedTenant(t, "scale")
	owner := strings.Split(ten.OwnerEmail, "@")[0]
	conv := escalatedChat(t, b, ten, "My parcel never came, can a person help?")
	ctx := webtest.BrowserTab(t)
	webtest.WatchCSP(ctx, t)
	_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: fakeNotifications})
	webtest.MustStep(t, "faking notifications", err)
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin/conversations")

	// the list: waiting on top, counted in the navigation and the title
	webtest.WaitUntil(ctx, t, "the count in the navigation", `document.querySelector('#nav-waiting')?.dataset.waiting === '1'`)
	webtest.WaitUntil(ctx, t, "the count in the title", `document.title === '(1) Conversations · Parley'`)
	webtest.MustStep(t, "asking for notifications", chromedp.Do(ctx, chromedp.Click(chromedp.ID("notify-me"))))
	webtest.WaitUntil(ctx, t, "the permission's answer", `getComputedStyle(document.getElementById('notify-me')).display === 'none' &&
		document.getElementById('notify-status').textContent.startsWith('You are notified')`)
	axeAtBothSizes(ctx, t, axe, "inbox waiting")
	webtest.MustStep(t, "laptop", chromedp.Do(ctx, chromedp.EmulateViewport(1366, 900)))

	// another visitor asks for a person while the owner works: notified
	// at the navigation's next poll
	other := escalatedChat(t, b, ten, "Is anybody there?")

	// Clicked in the page, found as it is clicked: the inbox's poll may
	// swap the list (the other visitor's escalation) between a look-up
	// and a click of the browser's protocol.
	webtest.WaitUntil(ctx, t, "the conversation in the list", `!!document.querySelector('#inbox-`+conv.ID+` a.conversation-question')`)
	webtest.MustStep(t, "opening the conversation", chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#inbox-`+conv.ID+` a.conversation-question').click()`),
		chromedp.WaitVisible(chromedp.ID("take-over"))))
	axeAtBothSizes(ctx, t, axe, "conversation waiting")
	webtest.MustStep(t, "laptop", chromedp.Do(ctx, chromedp.EmulateViewport(1366, 900),
		chromedp.Evaluate[chromedp.Void](`window.__sameDocument = true`)))

	clickWhenReady(ctx, t, "#take-over")
	stateIs(ctx, t, "With you")

	// Shift+Enter starts a new line, Enter sends; typing tells the
	// visitor's widget (the signal stored under the owner's name)
	webtest.MustStep(t, "typing a reply", chromedp.Do(ctx, webtest.KeyIn(chromedp.ID("reply"), "Hello, I am here.")))
	for deadline := time.Now().Add(15 * time.Second); personTyping(t, b, conv.ID) != owner; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("typing in the reply box sent no signal")
		}
	}
	webtest.MustStep(t, "sending the reply", chromedp.Do(ctx,
		chromedp.KeyEvent("\r", chromedp.KeyModifiers(chromedp.ModifierShift)), webtest.KeyIn(chromedp.ID("reply"), "Let me look."),
		chromedp.KeyEvent("\r")))
	webtest.WaitUntil(ctx, t, "the reply in the transcript", `[...document.querySelectorAll('#messages li.message.human .content')]
		.some(c => c.textContent === 'Hello, I am here.\nLet me look.') && document.getElementById('reply').value === ''`)
	if who := webtest.MustRunStep(ctx, t, "author", chromedp.Evaluate[string](`document.querySelector('#messages li.message.human .who').textContent`)); !strings.Contains(who, owner) {
		t.Errorf("the reply is signed %q, want %q", who, owner)
	}
	msgs := storedMessages(t, b, ten, conv.ID)
	if last := msgs[len(msgs)-1]; last.Role != parley.RoleHuman || webtest.StrOrEmpty(last.AuthorName) != owner || last.Content != "Hello, I am here.\nLet me look." {
		t.Errorf("stored %s by %q: %q", last.Role, webtest.StrOrEmpty(last.AuthorName), last.Content)
	}

	// the visitor types, then answers: both appear without a reload, and
	// the message ends the typing
	recorded, err := b.DB.SignalVisitorTyping(context.Background(), ten.ID, conv.SessionID)
	if err != nil || !recorded {
		t.Fatalf("the widget's typing signal: %v, %v", recorded, err)
	}
	webtest.WaitUntil(ctx, t, "the visitor typing", `document.getElementById('visitor-typing').textContent.trim() === 'The visitor is typing…'`)
	visitorSays(t, b, ten, conv, "Thank you! Order 4471.")
	webtest.WaitUntil(ctx, t, "the visitor's message", `[...document.querySelectorAll('#messages li.message.user .content')]
		.some(c => c.textContent === 'Thank you! Order 4471.') && document.getElementById('visitor-typing').textContent.trim() === ''`)
	axeAtBothSizes(ctx, t, axe, "conversation taken over")
	webtest.MustStep(t, "laptop", chromedp.Do(ctx, chromedp.EmulateViewport(1366, 900)))

	clickWhenReady(ctx, t, "#hand-back")
	stateIs(ctx, t, "Answered by the assistant")
	clickWhenReady(ctx, t, "#close-conversation")
	stateIs(ctx, t, "Closed")
	if !webtest.MustRunStep(ctx, t, "same page", chromedp.Evaluate[bool](`window.__sameDocument === true`)) {
		t.Error("the page was reloaded")
	}
	if cv, err := b.DB.Conversation(context.Background(), ten.ID, conv.ID); err != nil || cv.Status != parley.StatusClosed {
		t.Errorf("stored as %s (%v)", cv.Status, err)
	}

	const notes = `JSON.parse(sessionStorage.getItem('fake-notes') || '[]')`
	webtest.WaitUntil(ctx, t, "the notification of the other visitor", notes+`.length > 0`)
	// (one or two waiting: the poll may come before or after the first is closed)
	if notes := webtest.MustRunStep(ctx, t, "notes", chromedp.Evaluate[[]string](notes)); len(notes) != 1 ||
		!strings.HasPrefix(notes[0], "A visitor asks for a person: ") || !strings.HasSuffix(notes[0], " waiting for a person.") {
		t.Errorf("notifications %q (the other conversation is %s)", notes, other.ID)
	}
	for _, v := range webtest.CSPViolations(ctx, t) {
		t.Errorf("refused by the Content-Security-Policy: %s", v)
	}
}
