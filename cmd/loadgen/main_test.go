package main

import (
	"regexp"
	"strings"
	"testing"
)

func TestParseTargets(t *testing.T) {
	t.Parallel()
	ts, err := parseTargets("http://a:1/, http://b:2", "postgres://x/a,postgres://x/b", "10,20", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].name != "A" || ts[1].name != "B" || ts[0].url != "http://a:1" || ts[1].dbURL != "postgres://x/b" || ts[1].pid != 20 {
		t.Fatalf("targets: %+v %+v", *ts[0], *ts[1])
	}
	one, err := parseTargets("http://a:1", "", "", "")
	if err != nil || len(one) != 1 || one[0].name != "Parley" || one[0].pid != 0 || one[0].dbURL != "" {
		t.Fatalf("one target: %+v, %v", one, err)
	}
	named, err := parseTargets("http://a,http://b", "", "", "start,today")
	if err != nil || named[0].name != "start" || named[1].name != "today" {
		t.Fatalf("named: %v", err)
	}
	for _, c := range []struct{ urls, dbs, pids, names, want string }{
		{"", "", "", "", "-parley"},
		{"http://a,http://b", "postgres://x/a", "", "", "-db"},
		{"http://a", "", "1,2", "", "-parley-pid"},
		{"http://a", "", "x", "", "not a pid"},
		{"http://a,http://b", "", "", "same,same", "-names"},
		{"http://a", "", "", "direct", "-names"},
	} {
		_, err := parseTargets(c.urls, c.dbs, c.pids, c.names)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseTargets(%q, %q, %q, %q): %v, want an error naming %s", c.urls, c.dbs, c.pids, c.names, err, c.want)
		}
	}
}

// TestRoundOrderTurns: each server comes first in turn, and every round
// measures each once.
func TestRoundOrderTurns(t *testing.T) {
	t.Parallel()
	ts := []*target{{name: "A"}, {name: "B"}, {name: "C"}}
	for r, want := range []string{"ABC", "BCA", "CAB", "ABC"} {
		var got strings.Builder
		for _, x := range roundOrder(ts, r+1) {
			got.WriteString(x.name)
		}
		if got.String() != want {
			t.Errorf("round %d: %s, want %s", r+1, got.String(), want)
		}
	}
	if ts[0].name != "A" || ts[1].name != "B" {
		t.Error("roundOrder changed its argument")
	}
}

func TestMinus(t *testing.T) {
	t.Parallel()
	got := minus(Span{5, 7}, Span{1, 2})
	if len(got) != 2 || got[0] != 4 || got[1] != 5 {
		t.Errorf("minus = %v", got)
	}
	if minus(Span{5}, Span{1, 2}) != nil || minus(nil, nil) != nil {
		t.Error("minus of unequal or empty spans is not nil")
	}
}

// The widget mode's anonymous ids have the widget's form ("anon_" and 32
// lower-case hex digits, parley.ValidAnonymousID), one a session.
func TestAnonymousID(t *testing.T) {
	t.Parallel()
	form := regexp.MustCompile(`^anon_[0-9a-f]{32}$`)
	a, b := anonymousID("load-x-1"), anonymousID("load-x-2")
	if !form.MatchString(a) || !form.MatchString(b) || a == b || a != anonymousID("load-x-1") {
		t.Fatalf("anonymous ids %q, %q: not of the widget's form, or not one a session", a, b)
	}
}
