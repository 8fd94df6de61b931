package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/views"
	"github.com/parley/parley/web/webtest"
)

// TestWidgetFrenchSiteProofBrowser is issue 38's proof, in Chromium on a
// host page of another origin: a French page opens the widget from its own
// "Discutez avec nous" button through window.Parley.open() (no launcher);
// the widget speaks French, the visitor's message carries the locale fr,
// and the French answer shows the entry it rests on as its source, its
// marker gone; the visitor's bad email is told beside the field in French
// and fixed in place; the lead then sits on its conversation, which names
// the visitor.
func TestWidgetFrenchSiteProofBrowser(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil, llmtest.Turn{Text: []string{"Nous ouvrons du mardi au samedi, de 9 h à 18 h 30 [", "1]."}})
	b.AtOwnAddress()
	ten := b.OwnedTenant(t, "starter")
	b.MustDo(t, 201, "POST", "/tenants/"+ten.Slug+"/corpus", ten.Token, map[string]any{"title": "Horaires d'ouverture",
		"content": "La boutique est ouverte du mardi au samedi, de 9 h à 18 h 30.", "locale": "fr",
		"sourceUrl": "https://velos.example/horaires"})
	fields := []any{map[string]any{"name": "full_name", "label": "Nom", "type": "text", "required": true},
		map[string]any{"name": "email", "label": "E-mail", "type": "email", "required": true}}
	b.MustDo(t, 201, "POST", "/tenants/"+ten.Slug+"/segments", ten.Token, map[string]any{"name": "Boutique", "slug": "boutique",
		"systemPrompt": "Aide les clients de la boutique.", "welcomeMessage": "Bonjour !",
		"formConfig": map[string]any{"enabled": true, "intent": "un rappel", "confirmationMessage": "Merci, nous vous rappelons.", "fields": fields}})
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html lang="fr"><head><title>Vélos</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><h1>Vélos</h1><button id="chat-us" type="button" onclick="Parley.open()">Discutez avec nous</button>
<script>%s</script>
<script src="%s/widget.js" data-tenant="%s" data-segment="boutique" data-launcher="none" async></script></body></html>`,
			views.ParleySnippet, b.TS.URL, ten.Slug)
	}))
	t.Cleanup(site.Close)
	ctx := webtest.BrowserTab(t)
	const sr = widgetShadow
	js := webtest.ScriptsOf(ctx, t)
	run, str := js.Run, js.Str

	// The site's own button opens the widget; there is no launcher.
	webtest.MustStep(t, "opening the French page", chromedp.Do(ctx, chromedp.Navigate(site.URL+"/")))
	webtest.WaitUntil(ctx, t, "the widget", `!!document.querySelector('parley-widget')?.shadowRoot?.querySelector('.panel')`)
	webtest.MustStep(t, "the site's button", chromedp.Do(ctx, chromedp.Click("#chat-us")))
	webtest.WaitUntil(ctx, t, "the open panel", `!`+sr+`.querySelector('.panel').hidden`)
	launcher := str("the launcher", `(() => { const l = `+sr+`.querySelector('.launcher'); return l && getComputedStyle(l).display !== 'none' ? 'shown' : 'none'; })()`)
	if got := str("French words", sr+`.querySelector('textarea').placeholder + ' | ' + `+sr+`.querySelector('form.compose button').innerText`); got != "Écrivez un message… | Envoyer" || launcher != "none" {
		t.Errorf("the widget reads %q with its launcher %s, want French words and no launcher", got, launcher)
	}

	// A French answer with its source.
	run("asking", `(() => { const s = `+sr+`; s.querySelector('textarea').value = 'Quels sont vos horaires ?';
		s.querySelector('form.compose button').click(); })()`)
	webtest.WaitUntil(ctx, t, "the answer's sources", `!!`+sr+`.querySelector('.msg.bot .sources a')`)
	if got := str("the answer", `[...`+sr+`.querySelectorAll('.msg.bot')].find(m => m.querySelector('.sources')).innerText`); !strings.HasPrefix(got,
		"Nous ouvrons du mardi au samedi, de 9 h à 18 h 30.") || strings.Contains(got, "[1]") || !strings.Contains(got, "Sources : ") && !strings.Contains(got, "Sources: ") {
		t.Errorf("the answer reads %q", got)
	}
	if got := str("the source", sr+`.querySelector('.msg.bot .sources a').innerText + ' -> ' + `+sr+`.querySelector('.msg.bot .sources a').href`); got != "Horaires d'ouverture -> https://velos.example/horaires" {
		t.Errorf("the source = %q", got)
	}
	if p := lastPrompt(t, llm); !strings.Contains(p, "Reply in French.") || !strings.Contains(p, `entry ref=\"[1]\"`) {
		t.Errorf("the model's request: %.600s", p)
	}

	// The lead form, after the first answer: a bad email told in place, in French, then fixed.
	webtest.WaitUntil(ctx, t, "the lead form", `!!`+sr+`.querySelector('form.lead')`)
	run("a bad email", `(() => { const f = `+sr+`.querySelector('form.lead'); f.elements.full_name.value = 'Ada Lovelace';
		f.elements.email.value = 'ada@'; f.querySelector('button.go').click(); })()`)
	webtest.WaitUntil(ctx, t, "the email's error", sr+`.querySelector('form.lead').elements.email.getAttribute('aria-invalid') === 'true'`)
	emailError := `(() => { const i = ` + sr + `.querySelector('form.lead').elements.email, id = i.getAttribute('aria-describedby');
		return id ? ` + sr + `.getElementById(id).innerText : ''; })()`
	if got := str("the error beside the field", emailError); got != "Saisissez une adresse e-mail valide." {
		t.Errorf("the email's error reads %q", got)
	}
	run("fixing it", `(() => { const i = `+sr+`.querySelector('form.lead').elements.email; i.value = 'ada@example.com';
		i.dispatchEvent(new Event('input', { bubbles: true })); `+sr+`.querySelector('form.lead button.go').click(); })()`)
	webtest.WaitUntil(ctx, t, "the thanks", `!`+sr+`.querySelector('form.lead') && [...`+sr+`.querySelectorAll('.msg.bot')].some(m => m.innerText === 'Merci, nous vous rappelons.')`)

	// The lead on its conversation, which names the visitor.
	var conv string
	if err := b.DB.Pool().QueryRow(context.Background(), `SELECT s.conversation_id::text FROM submissions s
		JOIN conversations c ON c.id = s.conversation_id AND c.tenant_id = s.tenant_id
		WHERE s.tenant_id = $1 AND s.input->>'email' = 'ada@example.com' AND c.locale = 'fr'`, ten.ID).Scan(&conv); err != nil {
		t.Fatalf("the lead on a French conversation: %v", err)
	}
	admin := b.NewAdminClient(t)
	admin.SignIn(ten)
	p := admin.Get("/admin/conversations/" + conv)
	if p.Status != 200 || p.Text("#conversation-visitor a") != "Ada Lovelace" || !strings.Contains(p.Text("#conversation-submissions"), "un rappel") ||
		!strings.Contains(p.Text(".knowledge-used"), "Horaires d'ouverture") {
		t.Errorf("conversation page %d: visitor %q, submissions %q, drew on %q", p.Status, p.Text("#conversation-visitor"),
			p.Text("#conversation-submissions"), p.Text(".knowledge-used"))
	}
	webtest.SaveScreenshot(ctx, t, "widget-french-proof")
}
