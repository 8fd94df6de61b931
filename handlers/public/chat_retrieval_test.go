package public_test

import (
	"context"
	"strings"
	"testing"

	"github.com/parley/parley/agent"
	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/web/webtest"
)

// The prompt's knowledge is chosen for the question (issue 34): on a
// knowledge base larger than the knowledge cap, a reworded and a misspelt
// question bring their entry into the prompt, and two load orders of the
// same entries give the same knowledge.
func TestChatKnowledgeRankedForTheQuestion(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	// 230 entries of about 1,000 characters: ten times the cap, and more
	// than the prompt's load (agent.PromptCorpusLimit), so that the load
	// order could change which entries are candidates.
	entries := webtest.NoticeEntries(230)
	entries[37] = map[string]any{"externalId": "e37", "title": "Puncture repair",
		"content": "We fix a flat tyre while you wait: a new inner tube, fitted and checked, for 15 euros. " + webtest.NoticeFiller}
	entries[52] = map[string]any{"externalId": "e52", "title": "Saddle fitting",
		"content": "A saddle that hurts is adjusted to your sit bones in twenty minutes, free with every new bike. " + webtest.NoticeFiller}
	load := func(order []map[string]any) webtest.Tenant { return webtest.LoadEntries(t, b, order) }
	ask := func(ten webtest.Tenant, question string) string {
		t.Helper()
		system, _ := webtest.FirstPrompt(t, b, llm, ten, question)
		return system
	}
	ten := load(entries)
	for question, want := range map[string]string{
		"my tyre went flat, can you mend it while I wait?": "We fix a flat tyre while you wait",
		"my sadle is uncomfortable":                        "A saddle that hurts is adjusted",
	} {
		system := ask(ten, question)
		if !strings.Contains(system, want) {
			t.Errorf("%q: the prompt lacks %q", question, want)
		}
		if n := strings.Count(system, "<entry ref="); n >= len(entries) || n == 0 {
			t.Errorf("%q: %d entries in the prompt, want the cap's share of %d", question, n, len(entries))
		}
		if len(system) > agent.KnowledgeCap+20_000 {
			t.Errorf("%q: prompt of %d characters", question, len(system))
		}
	}
	// The same entries loaded in the reverse order: the same knowledge.
	reversed := make([]map[string]any, len(entries))
	for i, e := range entries {
		reversed[len(entries)-1-i] = e
	}
	other := load(reversed)
	for _, q := range []string{"do you fix punctures on saturday", "hello"} {
		if a, c := webtest.KnowledgeBlocks(ask(ten, q)), webtest.KnowledgeBlocks(ask(other, q)); a != c || a == "" {
			t.Errorf("%q: two load orders, two prompts:\n%.300s\n---\n%.300s", q, a, c)
		}
	}
}

// A visitor who names their language still gets an entry in another one
// when it is what answers (issue 34): the candidates are the visitor's
// language, and the search's matches in every language join them at half
// weight.
func TestChatKnowledgeLanguageFallback(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	ten := b.NewTenant(t, "scale")
	b.MustDo(t, 200, "POST", "/tenants/"+ten.Slug+"/corpus/bulk", ten.Token, map[string]any{"entries": []any{
		map[string]any{"externalId": "en-1", "title": "E-bike warranty", "locale": "en",
			"content": "Every e-bike battery carries a two-year warranty covering capacity loss below 70 percent."},
		map[string]any{"externalId": "fr-1", "title": "Horaires", "locale": "fr",
			"content": "L'atelier est ouvert du mardi au samedi, de neuf heures à dix-huit heures."},
		map[string]any{"externalId": "fr-2", "title": "Livraison", "locale": "fr",
			"content": "Nous livrons les vélos montés sous trois jours ouvrés."},
	}})
	llm.Push(llmtest.Turn{Text: []string{"OK."}})
	before := len(llm.Requests())
	r := b.Chat(t, "/chat/"+ten.Slug, map[string]any{"message": "Quelle est la garantie de la batterie e-bike ?", "sessionId": "s-fr", "locale": "fr"},
		map[string]string{"X-Forwarded-For": webtest.NewChatAddr()})
	reqs := llm.Requests()
	if r.Status != 200 || len(reqs) != before+1 {
		t.Fatalf("%d %v", r.Status, r.Body)
	}
	system := string(reqs[before].Chat.Messages[0].Content)
	if !strings.Contains(system, "two-year warranty") {
		t.Errorf("the English entry that answers is not in the prompt:\n%s", webtest.KnowledgeBlocks(system))
	}
	if !strings.Contains(system, "Horaires") {
		t.Errorf("the visitor's language's entries left the prompt:\n%s", webtest.KnowledgeBlocks(system))
	}
}

// A tenant's synonyms reach the turn: a question sharing no word with an
// entry gets it into the prompt once a group says the words mean the same
// (issue 34), on a knowledge base larger than the cap.
func TestChatKnowledgeSynonyms(t *testing.T) {
	t.Parallel()
	b, llm := webtest.SetupChat(t, nil)
	entries := append(webtest.NoticeEntries(60), map[string]any{"externalId": "wheels", "title": "Wheels by the day",
		"content": "City cycles to hire by the day or the week, helmet and lock included. " + webtest.NoticeFiller})
	ten := webtest.LoadEntries(t, b, entries)
	want := "City cycles to hire by the day"
	ask := func(question string) string {
		t.Helper()
		system, _ := webtest.FirstPrompt(t, b, llm, ten, question)
		return system
	}
	question := "can I rent a bike?"
	if strings.Contains(ask(question), want) {
		t.Fatal("the entry is in the prompt without synonyms: the test proves nothing")
	}
	if _, err := b.DB.Pool().Exec(context.Background(), `INSERT INTO corpus_synonyms (tenant_id, terms) VALUES ($1, ARRAY['bike', 'cycle']), ($1, ARRAY['rent', 'hire'])`, ten.ID); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ask(question), want) {
		t.Error("the synonyms did not bring the entry into the prompt")
	}
}
