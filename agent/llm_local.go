package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/agent/rank"
)

// LocalNotice is what the owner reads where the dashboard shows an answer
// of the local provider: no language model is configured. Visitors never
// read it: they get the knowledge base's answer in plain words.
const LocalNotice = "No language model is configured for this agent yet, so its answers quote the knowledge base directly."

// localWords are the local provider's own few words, by language: the
// answer when no passage matches, and when a hand-over left no message.
var localWords = map[string][2]string{
	"en": {"I could not find an answer to that. Could you ask it another way?", "A member of the team will take over."},
	"fr": {"Je n'ai pas trouvé de réponse à cela. Pouvez-vous poser la question autrement ?", "Un membre de l'équipe va prendre le relais."},
	"de": {"Dazu habe ich keine Antwort gefunden. Können Sie die Frage anders stellen?", "Ein Mitglied des Teams übernimmt gleich."},
	"es": {"No encontré una respuesta a eso. ¿Puede preguntarlo de otra manera?", "Un miembro del equipo continuará la conversación."},
}

// LocalNoMatch is the local provider's answer, in language, when no
// passage shares a word with the question.
func LocalNoMatch(language string) string { return localWord(language, 0) }

func localWord(language string, i int) string {
	w, ok := localWords[language]
	if !ok {
		w = localWords["en"]
	}
	return w[i]
}

// localMaxPassages and localMaxChars bound the local provider's answer.
const (
	localMaxPassages = 3
	localMaxChars    = 800
)

// Local is the provider that needs no network: it answers with the request's
// passages that best match the last user message, each with its citation
// marker, and runs the one tool it can call without a model: the hand-over
// to a person (ESCALATE_TO_HUMAN), when the visitor asks for one. A new
// install works with it before any key is set.
type Local struct{}

// NewLocal builds the local provider.
func NewLocal() *Local { return &Local{} }

// Name returns "local".
func (*Local) Name() string { return "local" }

// Model returns "corpus": the answer is the corpus itself.
func (*Local) Model() string { return "corpus" }

// Stream answers from req.Passages, each best passage one chunk, or hands
// the conversation over when the visitor asks for a person and the turn
// offers the tool, then words the tool's answer.
func (*Local) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	events := localAnswer(req)
	return func(yield func(llm.Event, error) bool) {
		for _, ev := range events {
			if err := ctx.Err(); err != nil {
				yield(llm.Event{}, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}, nil
}

// localAnswer is the local provider's answer to req, as events.
func localAnswer(req llm.Request) []llm.Event {
	done := llm.Event{Kind: llm.EventDone, StopReason: llm.StopEnd}
	text := func(s string) llm.Event { return llm.Event{Kind: llm.EventText, Text: s} }
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == llm.RoleTool {
		return []llm.Event{text(localToolWords(req.Messages[n-1].Content, req.Language)), done}
	}
	var question string
	for _, m := range slices.Backward(req.Messages) {
		if m.Role == llm.RoleUser {
			question = m.Content
			break
		}
	}
	if LocalWantsPerson(question) {
		for _, t := range req.Tools {
			if t.Type == parley.ToolEscalateToHuman {
				args, _ := json.Marshal(map[string]string{"reason": "The visitor asked to talk to a person: " + localClip(question, 200)})
				return []llm.Event{{Kind: llm.EventToolCall, ToolCall: llm.ToolCall{ID: "local_handover", Name: t.Name, Arguments: args}},
					{Kind: llm.EventDone, StopReason: llm.StopToolCalls}}
			}
		}
	}
	best := LocalRank(question, req.Passages)
	if len(best) == 0 {
		return []llm.Event{text(LocalNoMatch(req.Language)), done}
	}
	var events []llm.Event
	for i, p := range best[:min(len(best), localMaxPassages)] {
		s := ""
		if i > 0 {
			s = "\n\n"
		}
		if p.Title != "" {
			s += "**" + p.Title + "**\n"
		}
		s += localClip(strings.TrimSpace(p.Content), localMaxChars)
		if p.Ref > 0 {
			s += fmt.Sprintf(" [%d]", p.Ref)
		}
		events = append(events, text(s))
	}
	return append(events, done)
}

// localToolWords words a tool's result for the visitor: the hand-over's
// message (or the words of a tool that ended the turn), else the team's.
func localToolWords(content, language string) string {
	var m struct {
		Result struct {
			HandoffMessage string `json:"handoffMessage"`
			Message        string `json:"message"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(content), &m) == nil {
		if s := cmp.Or(m.Result.HandoffMessage, m.Result.Message); s != "" {
			return s
		}
	}
	return localWord(language, 1)
}

// localPerson and localTalk are the words of a visitor asking for a person
// (English, French, German, Spanish, and the widget's button in Arabic and
// Hebrew): a word for a person and a verb of
// talking or reaching, so that "how much per person?" is a question.
var (
	localPerson = regexp.MustCompile(`(?i)(?:^|\P{L})(person|people|human|someone|somebody|agent|representative|operator|staff|team|personne|humain|quelqu.un|conseill\w*|équipe|mensch\w*|mitarbeiter\w*|jemand\w*|persona|humano|alguien|agente|equipo|شخص|موظف|נציג|אדם)(?:\P{L}|$)`)
	localTalk   = regexp.MustCompile(`(?i)(?:^|\P{L})(talk|speak|chat|contact|reach|connect|call|parler|contacter|joindre|appeler|sprechen|reden|kontakt\w*|erreichen|hablar|contactar|llamar|التحدث|تحدث|שיחה|לדבר)(?:\P{L}|$)`)
)

// LocalWantsPerson says the message asks for a person.
func LocalWantsPerson(message string) bool {
	return localPerson.MatchString(message) && localTalk.MatchString(message)
}

// localNear is how close to the best passage's score another must come to
// be quoted with it: the answer quotes what the question is about, not
// every passage that shares a word with it.
const localNear = 0.6

// LocalRank orders passages for the question with the turn's ranking
// (rank.Scores: rare words count most, a title more than content,
// typos read as the nearest word of the passages) and drops those sharing
// no word with it, and those scoring under localNear of the best. Ties keep
// the passages' order, which is the turn's.
func LocalRank(question string, passages []llm.Passage) []llm.Passage {
	corpus := make([]parley.CorpusEntry, len(passages))
	for i, p := range passages {
		corpus[i] = parley.CorpusEntry{Title: p.Title, Content: p.Content}
	}
	score := rank.Scores([]string{question}, corpus, "")
	var order []int
	for i, s := range score {
		if s > 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(score[j], score[i]) })
	if len(order) > 0 {
		best := score[order[0]]
		order = slices.DeleteFunc(order, func(i int) bool { return score[i] < localNear*best })
	}
	out := make([]llm.Passage, len(order))
	for k, i := range order {
		out[k] = passages[i]
	}
	return out
}

// localClip shortens s to at most n bytes, at a word boundary.
func localClip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndexFunc(s[:n], unicode.IsSpace)
	if cut <= 0 {
		cut = n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
	}
	return strings.TrimSpace(s[:cut]) + " …"
}
