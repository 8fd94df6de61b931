package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"strings"
	"time"

	"github.com/parley/parley/db"
)

// seedBatch is how many conversations one COPY transaction writes: about
// ten thousand rows with the default ten messages each.
const seedBatch = 1000

// seedConversations fills a tenant with generated conversations for load
// tests: varied channels, statuses, segments, pages, questions (drawn from
// templates with variations of case and punctuation, so that topIntents
// groups them), tool runs with their submissions, and votes, spread over the
// last days.
func seedConversations(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("seed-conversations", stderr)
	slug := fs.String("tenant", "", "tenant slug (required)")
	count := fs.Int("conversations", 1000, "conversations to add")
	per := fs.Int("messages-per", 10, "mean messages per conversation (even counts from 2 to 2*(N-1))")
	days := fs.Int("days", 365, "spread the conversations over this many days before now")
	seed := fs.Uint64("seed", 1, "random seed: the same seed gives the same data (ids and sessions aside)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *slug == "":
		return errors.New("--tenant: required")
	case *count < 1:
		return errors.New("--conversations: must be at least 1")
	case *per < 2:
		return errors.New("--messages-per: must be at least 2")
	case *days < 1:
		return errors.New("--days: must be at least 1")
	}
	return withDB(ctx, func(store *db.DB) error {
		t, err := store.TenantBySlug(ctx, *slug)
		if err != nil {
			return fmt.Errorf("--tenant %s: %w", *slug, err)
		}
		segs, err := store.ListSegments(ctx, t.ID)
		if err != nil {
			return err
		}
		g := &convGenerator{rng: mrand.New(mrand.NewPCG(*seed, 12)), per: *per,
			now: time.Now().UTC(), span: time.Duration(*days) * 24 * time.Hour}
		for _, s := range segs {
			g.segments = append(g.segments, s.ID)
		}
		start := time.Now()
		messages := 0
		for done := 0; done < *count; {
			batch := make([]db.SeedConversation, min(seedBatch, *count-done))
			for i := range batch {
				batch[i] = g.conversation()
			}
			n, err := store.CopySeedConversations(ctx, t.ID, batch)
			if err != nil {
				return err
			}
			done += len(batch)
			messages += n
			fmt.Fprintf(stderr, "\rseed-conversations: %d/%d conversations, %d messages, %.1f s", done, *count, messages,
				time.Since(start).Seconds())
		}
		fmt.Fprintln(stderr)
		if err := store.AnalyzeConversations(ctx); err != nil {
			return err
		}
		return printJSON(stdout, map[string]any{"tenant": t.Slug, "conversations": *count, "messages": messages,
			"seconds": time.Since(start).Round(time.Millisecond).Seconds()})
	})
}

// convGenerator draws conversations; rng makes runs repeatable.
type convGenerator struct {
	rng      *mrand.Rand
	per      int
	now      time.Time
	span     time.Duration
	segments []string
	seq      int
}

// questionTemplates are visitors' first questions; {n} becomes a number, so
// those make a long tail of distinct intents.
var questionTemplates = []string{
	"How much does shipping cost?", "Do you ship internationally?", "What are your opening hours?",
	"Can I return an item?", "How do I reset my password?", "Where is my order?", "Do you offer a free trial?",
	"What payment methods do you accept?", "Can I talk to a human?", "How do I cancel my subscription?",
	"Is there a student discount?", "How long does delivery take?", "Do you have this in stock?",
	"Can I change my delivery address?", "What is your refund policy?", "How do I contact support?",
	"Can I book a demo?", "What is the price of the pro plan?", "Do you have an API?", "Is my data secure?",
	"Where is order #{n}?", "I need a quote for {n} units", "Do you deliver to postcode {n}?",
	"My invoice {n} is wrong", "Can I book a meeting on the {n}th?",
}

var (
	pages      = []string{"/", "/pricing", "/products", "/products/widget", "/products/gadget", "/contact", "/faq", "/shipping", "/returns", "/blog/launch", "/about", "/checkout"}
	pageQuery  = []string{"", "", "", "?utm_source=newsletter", "?utm_source=google&utm_medium=cpc", "#reviews"}
	answers    = []string{"Happy to help with that. ", "Good question! ", "Here is what I found: ", "Sure. ", ""}
	answerBody = []string{
		"Standard shipping is free over 50 EUR and takes three to five working days.",
		"You can return any item within 30 days for a full refund, no questions asked.",
		"Our team is available Monday to Friday, 9:00 to 18:00 CET.",
		"The pro plan is 29 EUR a month, billed yearly, with every feature included.",
		"I have passed your request to a colleague who will write back within a day.",
	}
	followUps = []string{"Thanks!", "And what about weekends?", "Can you send me the link?", "ok", "Is that with VAT?", "Great, thank you very much."}
	locales   = []string{"en", "en", "en", "fr", "de", "es"}
)

// seedTools are the tools a seeded conversation may run; Submission marks
// those that store a submission.
var seedTools = []struct {
	name, typ  string
	submission bool
}{
	{"contact_form", "SUBMIT_FORM", true}, {"quote", "GENERATE_QUOTE", false}, {"book_demo", "BOOK_MEETING", true},
	{"handoff", "ESCALATE_TO_HUMAN", false}, {"remember", "REMEMBER_FACT", false}, {"recommend", "RECOMMEND_PRODUCT", false},
}

// pick draws one of xs.
func pick[T any](r *mrand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// vary rewrites a question as visitors do: case, punctuation, spacing, a greeting.
func (g *convGenerator) vary(q string) string {
	q = strings.ReplaceAll(q, "{n}", fmt.Sprint(1000+g.rng.IntN(9000)))
	switch g.rng.IntN(6) {
	case 0:
		q = strings.ToLower(q)
	case 1:
		q = strings.TrimRight(q, "?") + "??"
	case 2:
		q = strings.TrimRight(q, "?")
	case 3:
		q = "  " + strings.ToUpper(q[:1]) + q[1:] + " "
	}
	if g.rng.IntN(8) == 0 {
		q = "Hi! " + q
	}
	return q
}

func (g *convGenerator) conversation() db.SeedConversation {
	r := g.rng
	g.seq++
	id := db.NewSeedID()
	// More recent days are busier: the square root skews draws toward now.
	age := time.Duration(float64(g.span) * (1 - math.Sqrt(r.Float64())))
	c := db.SeedConversation{
		ID: id, SessionID: fmt.Sprintf("seed-%x", id[:12]), Channel: "web", Status: "BOT", VisitorType: "human",
		Locale: pick(r, locales), CreatedAt: g.now.Add(-age).Truncate(time.Microsecond),
	}
	switch x := r.IntN(100); {
	case x < 8:
		c.Channel, c.VisitorType = "agent", "agent"
		m := "gpt-4o-mini"
		c.AgentModel = &m
	case x < 13:
		c.Channel = "voice"
	case x < 25:
		c.Channel = "api"
	}
	if c.Channel == "web" || r.IntN(4) == 0 {
		p := "https://shop.example.com" + pick(r, pages) + pick(r, pageQuery)
		c.PageURL = &p
	}
	if len(g.segments) > 0 && r.IntN(10) > 0 {
		s := pick(r, g.segments)
		c.SegmentID = &s
	}
	c.FirstUserMessage = g.vary(pick(r, questionTemplates))

	n := 2 * (1 + r.IntN(g.per-1))
	at := c.CreatedAt
	for i := range n {
		m := db.SeedMessage{Role: "user", CreatedAt: at}
		switch {
		case i == 0:
			m.Content = c.FirstUserMessage
		case i%2 == 1:
			m.Role = "assistant"
			m.Content = pick(r, answers) + pick(r, answerBody)
			if r.IntN(12) == 0 {
				v := int16(1)
				if r.IntN(4) == 0 {
					v = -1
				}
				m.Feedback = &v
			}
		default:
			m.Content = pick(r, followUps)
		}
		c.Messages = append(c.Messages, m)
		at = at.Add(time.Duration(2+r.IntN(60)) * time.Second)
	}
	if r.IntN(10) < 3 {
		for range 1 + r.IntN(3) {
			t := seedTools[r.IntN(len(seedTools))]
			c.Tools = append(c.Tools, db.SeedToolCall{
				Name: t.name, Type: t.typ, Submission: t.submission,
				Input:     fmt.Appendf(nil, `{"email":"visitor%d@example.com","note":"seeded"}`, g.seq),
				Result:    []byte(`{"ok":true}`),
				CreatedAt: c.CreatedAt.Add(time.Duration(1+r.IntN(30)) * time.Second),
			})
			if t.typ == "ESCALATE_TO_HUMAN" {
				c.Status = "ESCALATED"
			}
		}
	}
	return c
}
