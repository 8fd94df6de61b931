// Package testrun answers the questions of a tenant's test set (db/testset)
// through the real engine, as the dashboard's test chat does (a test turn:
// stored apart from visitors' conversations, counted in no limit or
// analytics), and checks each answer against its facts: by plain matching
// (Contains: case, accents and spacing aside) and, when asked, by the
// tenant's model as a judge (agent.Engine.Judge). jobs' test run worker
// calls it for each question still pending.
package testrun

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
	"github.com/parley/parley/agent/outbound/llm"
	"github.com/parley/parley/db/testset"
)

// Runner answers and checks test questions.
type Runner struct {
	Engine *agent.Engine
}

// SessionID is the test chat session of a run's question: one per
// question, so that each is asked afresh, with no history.
func SessionID(runID string, position int) string {
	return "test-run-" + runID + "-" + strconv.Itoa(position)
}

// Answer asks question r of run runID of tenant t in segment seg, and
// checks the answer's facts (with the judge when judge is set). A turn
// that fails is an outcome of status error, with the failure in words.
func (r *Runner) Answer(ctx context.Context, t parley.Tenant, seg parley.Segment, runID string, q testset.Result, judge bool) testset.Outcome {
	start := time.Now()
	in := &agent.TurnInput{Tenant: t, Segment: seg, SessionID: SessionID(runID, q.Position), Message: q.Question,
		Channel: parley.ChannelWeb, VisitorType: parley.VisitorHuman, Test: true,
		Metadata: parley.ConversationMetadata{UserAgent: "Parley test run"}}
	out, err := r.Engine.Reply(ctx, in, func(llm.Event) {})
	o := testset.Outcome{Status: testset.ResultError}
	if out != nil {
		o.Answer, o.ConversationID, o.Sources = out.Result.Text, out.ConversationID, out.Knowledge
	}
	if err != nil {
		o.Error = failure(err)
		o.Duration = time.Since(start)
		return o
	}
	o.Checks = r.check(ctx, t, q, o.Answer, judge)
	o.Status = testset.ResultPassed
	for _, c := range o.Checks {
		if !c.Passed {
			o.Status = testset.ResultFailed
		}
	}
	o.Duration = time.Since(start)
	return o
}

// failure is a failed turn's error in words safe to show the owner.
func failure(err error) string {
	var pe *parley.Error
	var le *llm.Error
	switch {
	case errors.As(err, &pe):
		return pe.Message
	case errors.As(err, &le):
		return le.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return "The answer took too long"
	}
	return "The question could not be answered"
}

// check gives each fact of q its verdict on answer.
func (r *Runner) check(ctx context.Context, t parley.Tenant, q testset.Result, answer string, judge bool) []testset.Check {
	checks := make([]testset.Check, 0, len(q.MustContain)+len(q.MustNotContain))
	add := func(fact string, must bool) {
		c := testset.Check{Fact: fact, Must: must, Found: Contains(answer, fact)}
		stated := c.Found
		if judge {
			v, err := r.Engine.Judge(ctx, t, q.Question, answer, fact)
			if err != nil {
				c.JudgeError = failure(err)
			} else {
				c.Judged, stated = &v, v
			}
		}
		c.Passed = stated == must
		checks = append(checks, c)
	}
	for _, f := range q.MustContain {
		add(f, true)
	}
	for _, f := range q.MustNotContain {
		add(f, false)
	}
	return checks
}

// Contains reports whether fact is in text, case, accents and spacing
// aside: "Two  YEARS" is in "a warranty of two years", "cafe" in "Café".
func Contains(text, fact string) bool {
	f := fold(fact)
	return f != "" && strings.Contains(fold(text), f)
}

// fold is s in lower case without accents, its runs of spaces one space.
func fold(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(strings.ToLower(s)) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
