package admin_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/web/webtest"
)

// listedInBrowser returns the ids of the inbox's conversations, in order.
func listedInBrowser(ctx context.Context, t *testing.T) []string {
	t.Helper()
	return webtest.MustRunStep(ctx, t, "listed conversations", chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll('#conversations li.conversation-item')).map(r => r.id.replace('conversation-', ''))`))
}

func TestBrowserConversations(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	f := seedInbox(t, b)
	ctx := webtest.BrowserTab(t)
	webtest.OpenSignedIn(ctx, t, b, f.Ten, "/admin")
	list := b.TS.URL + "/admin/conversations"

	t.Run("Inbox", func(t *testing.T) {
		webtest.MustStep(t, "opening the inbox", chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS(`nav a[href="/admin/conversations"]`)), chromedp.WaitVisible(chromedp.ID("conversations"))))
		want := []string{f.Escalated.ID, f.Ada.ID, f.AgentConv.ID, f.Janua.ID}
		if got := listedInBrowser(ctx, t); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("rows %v, want %v", got, want)
		}
		// the escalated conversation stands out: a coloured edge the others do not have
		edges := webtest.MustRunStep(ctx, t, "edges", chromedp.Evaluate[[]string](`[...document.querySelectorAll('#conversations li')]
			.map(li => getComputedStyle(li).borderLeftColor)`))
		if len(edges) != 4 || edges[0] == edges[1] {
			t.Errorf("left edges %v: the escalated one does not stand out", edges)
		}
		webtest.SaveScreenshot(ctx, t, "conversations inbox laptop")
	})

	t.Run("Filters", func(t *testing.T) {
		webtest.MustStep(t, "choosing a channel", chromedp.Do(ctx, chromedp.Navigate(list), chooseOption("channel", "voice")))
		if status := webtest.SubmitForm(ctx, t, "#apply-filters"); status != http.StatusOK {
			t.Fatalf("status %d", status)
		}
		if got := listedInBrowser(ctx, t); len(got) != 1 || got[0] != f.Escalated.ID {
			t.Errorf("voice: %v", got)
		}
		webtest.MustStep(t, "ticking has a submission", chromedp.Do(ctx, chromedp.Navigate(list), chromedp.Click(chromedp.ID("submission"))))
		webtest.SubmitForm(ctx, t, "#apply-filters")
		if got := listedInBrowser(ctx, t); len(got) != 1 || got[0] != f.Ada.ID {
			t.Errorf("with a submission: %v", got)
		}
		if !webtest.MustRunStep(ctx, t, "still ticked", chromedp.Evaluate[bool](`document.getElementById('submission').checked`)) {
			t.Error("the check box lost its tick after filtering")
		}
		webtest.MustStep(t, "searching", chromedp.Do(ctx, chromedp.Navigate(list), webtest.FillField("search", "starter")))
		webtest.SubmitForm(ctx, t, "#apply-filters")
		if got := listedInBrowser(ctx, t); len(got) != 1 || got[0] != f.AgentConv.ID {
			t.Errorf("search: %v", got)
		}
		webtest.MustStep(t, "searching nothing", chromedp.Do(ctx, chromedp.Navigate(list), webtest.FillField("search", "zebra crossing")))
		webtest.SubmitForm(ctx, t, "#apply-filters")
		if got := webtest.MustRunStep(ctx, t, "empty", chromedp.Text(chromedp.ID("no-conversations"))); got != "No conversation matches these filters." {
			t.Errorf("no match: %q", got)
		}
	})

	t.Run("Transcript", func(t *testing.T) {
		webtest.MustStep(t, "opening a conversation", chromedp.Do(ctx, chromedp.Navigate(list),
			chromedp.Click(chromedp.CSS(`#conversation-`+f.Ada.ID+` a.conversation-question`)), chromedp.WaitVisible(chromedp.ID("messages"))))
		roles := webtest.MustRunStep(ctx, t, "roles", chromedp.Evaluate[[]string](`[...document.querySelectorAll('#messages > li')].map(li => li.className)`))
		if strings.Join(roles, ",") != "message user,tool-call,message assistant,message user,message assistant" {
			t.Errorf("transcript %v", roles)
		}
		tool := webtest.MustRunStep(ctx, t, "tool", chromedp.Text(chromedp.CSS("#messages .tool-call")))
		if !strings.Contains(tool, "ada@example.com") || strings.Contains(tool, "{") {
			t.Errorf("tool call shown as %q", tool)
		}
		webtest.SaveScreenshot(ctx, t, "conversation transcript laptop")
		webtest.MustStep(t, "phone", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Reload()))
		webtest.SaveScreenshot(ctx, t, "conversation transcript phone")
		webtest.MustStep(t, "following the submission", chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#conversation-submissions a`)),
			chromedp.WaitVisible(chromedp.ID("open-conversation"))))
		webtest.MustStep(t, "and back", chromedp.Do(ctx, chromedp.Click(chromedp.ID("open-conversation")), chromedp.WaitVisible(chromedp.ID("messages"))))
		if loc := webtest.MustRunStep(ctx, t, "location", chromedp.Location()); loc != b.TS.URL+"/admin/conversations/"+f.Ada.ID {
			t.Errorf("back at %s", loc)
		}
		webtest.MustStep(t, "inbox on a phone", chromedp.Do(ctx, chromedp.Navigate(list)))
		webtest.SaveScreenshot(ctx, t, "conversations inbox phone")
		webtest.MustStep(t, "laptop", chromedp.Do(ctx, chromedp.EmulateViewport(1366, 900)))
	})
}

func TestBrowserAnalytics(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	ten := b.OwnedTenant(t, "scale")
	seedMonth(t, b, ten)
	ctx := webtest.BrowserTab(t)
	webtest.OpenSignedIn(ctx, t, b, ten, "/admin")

	webtest.MustStep(t, "opening analytics", chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`nav a[href="/admin/analytics"]`)), chromedp.WaitVisible(chromedp.ID("timeline-chart")),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('from').value = '2026-03-01'; document.getElementById('to').value = '2026-03-31'`)))
	if status := webtest.SubmitForm(ctx, t, "#apply-filters"); status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	if got := webtest.MustRunStep(ctx, t, "total", chromedp.Text(chromedp.ID("total-conversations"))); got != "10" {
		t.Errorf("conversations %q", got)
	}
	if n := webtest.MustRunStep(ctx, t, "bars", chromedp.Evaluate[int](`document.querySelectorAll('#timeline-chart svg rect').length`)); n != 10 {
		t.Errorf("%d bars", n)
	}
	// the bars are drawn on the messages' scale: 1 conversation beside 4
	// messages is a quarter of the chart's 160 px
	if h := webtest.MustRunStep(ctx, t, "tallest", chromedp.Evaluate[float64](`Math.max(...[...document.querySelectorAll('#timeline-chart svg rect')]
		.map(r => r.getBoundingClientRect().height))`)); h < 35 || h > 45 {
		t.Errorf("tallest bar %.0f px high, want 40", h)
	}
	// the export the button links to, with the owner's session
	csv := webtest.MustRunStep(ctx, t, "export", chromedp.Evaluate[string](`fetch(document.getElementById('export-topIntents').href).then(r => r.text())`,
		chromedp.EvalAwaitPromise))
	if !strings.HasPrefix(csv, "question,count\r\nHow much is the Team plan?,6\r\n") {
		t.Errorf("export %q", csv)
	}
	webtest.MustStep(t, "opening the table", chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#timeline-chart summary"))))
	webtest.SaveScreenshot(ctx, t, "analytics month laptop")
	webtest.MustStep(t, "phone", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Reload()))
	if over := webtest.MustRunStep(ctx, t, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth - innerWidth`)); over > 0 {
		t.Errorf("the phone scrolls sideways by %d px", over)
	}
	// How conversations ended, on the phone: the rate chart with a stroke
	// per day with conversations, its table, the tables by channel and by
	// segment, and axe-core passing over the whole page.
	if n := webtest.MustRunStep(ctx, t, "resolution strokes", chromedp.Evaluate[int](`document.querySelectorAll('#resolution-chart svg polyline.series-a').length`)); n != 10 {
		t.Errorf("%d strokes of the resolution rate, want 10", n)
	}
	if got := webtest.MustRunStep(ctx, t, "resolution rate", chromedp.Text(chromedp.ID("resolution-rate"))); got != "50%" {
		t.Errorf("resolved by the assistant %q, want 50%%", got)
	}
	webtest.MustStep(t, "opening the resolution table", chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#resolution-chart summary")),
		chromedp.ScrollIntoView(chromedp.ID("resolution-by-channel"))))
	if rows := webtest.MustRunStep(ctx, t, "resolution rows", chromedp.Evaluate[[]int](`['resolution-timeline-table', 'resolution-by-channel', 'resolution-by-segment']
		.map(id => [...document.querySelectorAll('#' + id + ' tbody tr')].filter(r => r.getBoundingClientRect().height > 0).length)`)); len(rows) != 3 || rows[0] != 31 || rows[1] != 4 || rows[2] != 3 {
		t.Errorf("visible rows of the resolution tables %v, want 31 days, 4 channels, 3 segments (sales, default, none)", rows)
	}
	if over := webtest.MustRunStep(ctx, t, "width with the tables", chromedp.Evaluate[int](`document.documentElement.scrollWidth - innerWidth`)); over > 0 {
		t.Errorf("the phone scrolls sideways by %d px with the resolution tables open", over)
	}
	for _, v := range webtest.AxeViolations(ctx, t, webtest.AxeScript(t)) {
		t.Errorf("analytics on a phone: axe: %s", v)
	}
	webtest.SaveScreenshot(ctx, t, "analytics month phone")
	webtest.MustStep(t, "by week", chromedp.Do(ctx, chromedp.EmulateViewport(1366, 900), chooseOption("granularity", "week")))
	webtest.SubmitForm(ctx, t, "#apply-filters")
	if n := webtest.MustRunStep(ctx, t, "weeks", chromedp.Evaluate[int](`document.querySelectorAll('#timeline-chart tbody tr').length`)); n != 6 {
		t.Errorf("%d weeks, want 6", n)
	}
}
