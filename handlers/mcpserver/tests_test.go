package mcpserver_test

import (
	"testing"

	"github.com/parley/parley/agent/outbound/llm/llmtest"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/web/webtest"
)

// An agent checks a knowledge-base change with run_tests: the run fails,
// the entry is added, the run passes with the question now passing.
func TestMCPRunTests(t *testing.T) {
	t.Parallel()
	b, model := webtest.SetupChat(t, nil)
	ten := b.NewTenant(t, "builder")
	b.WorkTestRuns(t, ten.ID)
	cs := b.MCPClient(t, b.Token(t, ten.ID, auth.ScopeCorpusRead, auth.ScopeCorpusWrite))
	b.MustDo(t, 201, "POST", "/tenants/"+ten.Slug+"/tests", ten.Token, map[string]any{"question": "How long is the warranty?",
		"mustContain": []string{"two years"}})

	if got := mustFail(t, cs, "read_test_run", nil); got["error"] != "Test run not found" {
		t.Errorf("no run yet: %v", got)
	}
	if got := mustFail(t, cs, "run_tests", map[string]any{"wait": 51}); got["details"].(map[string]any)["wait"] == nil {
		t.Errorf("wait past its bound: %v", got)
	}

	model.Push(llmtest.Turn{Text: []string{"I could not find that."}})
	first := webtest.MustCall(t, cs, "run_tests", map[string]any{"wait": 20})
	run := first["run"].(map[string]any)
	failures := first["failures"].([]any)
	if first["finished"] != true || run["failed"] != float64(1) || len(failures) != 1 ||
		failures[0].(map[string]any)["answer"] != "I could not find that." || run["results"] != nil {
		t.Fatalf("first run_tests: %v", first)
	}

	webtest.MustCall(t, cs, "create_corpus_entry", map[string]any{"title": "Warranty", "content": "Every bike has a two years warranty."})
	model.Push(llmtest.Turn{Text: []string{"Two years."}})
	second := webtest.MustCall(t, cs, "run_tests", nil)
	changes := second["changes"].([]any)
	if second["finished"] != true || len(second["failures"].([]any)) != 0 || len(changes) != 1 ||
		changes[0].(map[string]any)["change"] != "now passing" || second["run"].(map[string]any)["nowPassing"] != float64(1) {
		t.Fatalf("second run_tests: %v", second)
	}
	latest := webtest.MustCall(t, cs, "read_test_run", nil)
	if latest["run"].(map[string]any)["id"] != second["run"].(map[string]any)["id"] {
		t.Errorf("read_test_run: %v", latest)
	}
	if got := mustFail(t, cs, "read_test_run", map[string]any{"id": "not-a-run"}); got["error"] != "Test run not found" {
		t.Errorf("unknown run: %v", got)
	}

	// A run still going when the wait ends is answered as it is; a second
	// start is refused with it.
	model.Push(llmtest.Turn{Stall: true})
	going := webtest.MustCall(t, cs, "run_tests", map[string]any{"wait": 0})
	if going["finished"] != false || going["run"].(map[string]any)["status"] != "running" {
		t.Errorf("wait 0: %v", going)
	}
	if got := mustFail(t, cs, "run_tests", nil); got["code"] != "RUN_IN_PROGRESS" {
		t.Errorf("second start: %v", got)
	}

	// Reading needs mcp:corpus:read, running mcp:corpus:write.
	ro := b.MCPClient(t, b.Token(t, ten.ID, auth.ScopeCorpusRead))
	if got := mustFail(t, ro, "run_tests", nil); got["error"] != "Missing scope: mcp:corpus:write" {
		t.Errorf("run_tests without mcp:corpus:write: %v", got)
	}
	webtest.MustCall(t, ro, "read_test_run", nil)
}
