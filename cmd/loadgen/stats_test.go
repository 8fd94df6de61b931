package main

import (
	"bytes"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"
)

func TestQuantileNearestRank(t *testing.T) {
	t.Parallel()
	var ds []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.50, 50 * time.Millisecond}, {0.99, 99 * time.Millisecond}, {1, 100 * time.Millisecond}, {0, time.Millisecond}} {
		if got := Quantile(ds, c.q); got != c.want {
			t.Errorf("Quantile(1..100 ms, %v) = %v, want %v", c.q, got, c.want)
		}
	}
	if ds[0] != 100*time.Millisecond {
		t.Error("Quantile sorted its argument in place")
	}
	if got := Quantile([]time.Duration{7}, 0.99); got != 7 {
		t.Errorf("one value: %v", got)
	}
	if got := Quantile(nil, 0.5); got != 0 {
		t.Errorf("no value: %v", got)
	}
}

// TestSummarizeLeavesErrorsOut: failed requests are counted, their times
// are not in the percentiles, and the rate counts successful ones only.
func TestSummarizeLeavesErrorsOut(t *testing.T) {
	t.Parallel()
	samples := []Sample{
		{TTFB: 1 * time.Millisecond, Total: 10 * time.Millisecond},
		{TTFB: 3 * time.Millisecond, Total: 30 * time.Millisecond},
		{TTFB: 0, Total: 0, Err: errors.New("status 429: slow down")},
		{TTFB: 2 * time.Millisecond, Total: 20 * time.Millisecond},
		{Err: errors.New("second")},
	}
	s := Summarize(samples, 2*time.Second)
	if s.N != 5 || s.Errors != 2 || s.FirstError != "status 429: slow down" {
		t.Errorf("N %d errors %d first %q", s.N, s.Errors, s.FirstError)
	}
	if s.TTFB50 != 2*time.Millisecond || s.TTFB99 != 3*time.Millisecond || s.Turn50 != 20*time.Millisecond || s.Turn99 != 30*time.Millisecond {
		t.Errorf("percentiles %+v", s)
	}
	if s.PerSecond != 1.5 {
		t.Errorf("rate %v, want 1.5 (3 successful in 2 s)", s.PerSecond)
	}
}

func TestSpanAndThousands(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    Span
		f    string
		want string
	}{
		{Span{262, 304, 290}, "%.0f", "262–304"},
		{Span{1344.2, 1343.9}, "%.0f", "1,344"},
		{Span{3729, 4040}, "%.0f", "3,729–4,040"},
		{Span{0.19}, "%.2f", "0.19"},
		{nil, "%.2f", "–"},
	} {
		if got := c.s.Format(c.f); got != c.want {
			t.Errorf("%v.Format(%q) = %q, want %q", c.s, c.f, got, c.want)
		}
	}
	for in, want := range map[string]string{"1234567.5": "1,234,567.5", "-1000": "-1,000", "999": "999", "0.25": "0.25"} {
		if got := Thousands(in); got != want {
			t.Errorf("Thousands(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseStat(t *testing.T) {
	t.Parallel()
	// A command name with a space and a parenthesis, as /proc allows.
	line := "4242 (postgres: a) b) S 4100 4242 4242 0 -1 4194560 500 0 0 0 250 75 3 4 20 0 1 0 100 0 0"
	s, err := parseStat(line)
	if err != nil {
		t.Fatal(err)
	}
	if s.ppid != 4100 || s.utime != 2500*time.Millisecond || s.stime != 750*time.Millisecond || s.cutime != 30*time.Millisecond || s.cstime != 40*time.Millisecond {
		t.Errorf("parsed %+v", s)
	}
	if _, err := parseStat("4242 (x) S 1"); err == nil {
		t.Error("a short line parsed")
	}
}

// TestReadStream: an answer counts when its last event ends it, from the
// model ([DONE]) and from Parley ("done":true); a cut stream is an error.
func TestReadStream(t *testing.T) {
	t.Parallel()
	start := time.Now()
	model := "data: {\"choices\":[]}\n\ndata: [DONE]\n\n"
	if _, err := readStream(strings.NewReader(model), start, true); err != nil {
		t.Errorf("model stream: %v", err)
	}
	parley := "data: {\"text\":\"word \"}\n\ndata: {\"done\":true,\"message\":\"word \"}\n\n"
	if _, err := readStream(strings.NewReader(parley), start, false); err != nil {
		t.Errorf("parley stream: %v", err)
	}
	if _, err := readStream(strings.NewReader("data: {\"text\":\"word \"}\n\n"), start, false); err == nil {
		t.Error("a stream cut before its end passed")
	}
	if _, err := readStream(strings.NewReader(""), start, true); err == nil {
		t.Error("an empty stream passed")
	}
	// A data line longer than the reader's buffer is read whole.
	long := "data: {\"x\":\"" + strings.Repeat("a", 10000) + "\"}\n\ndata: [DONE]\n\n"
	if _, err := readStream(bytes.NewBufferString(long), start, true); err != nil {
		t.Errorf("long line: %v", err)
	}
	// A long last event is read whole, its end included.
	longEnd := "data: {\"text\":\"x\"}\n\ndata: {\"message\":\"" + strings.Repeat("a", 10000) + "\",\"done\":true}\n\n"
	if _, err := readStream(bytes.NewBufferString(longEnd), start, false); err != nil {
		t.Errorf("long last event: %v", err)
	}
}

func TestRatiosAndMedian(t *testing.T) {
	t.Parallel()
	r := Ratios(Span{2, 9, 4}, Span{1, 3, 8})
	if len(r) != 3 || r[0] != 2 || r[1] != 3 || r[2] != 0.5 {
		t.Fatalf("Ratios = %v", r)
	}
	if got := Median(r); got != 2 {
		t.Errorf("Median(%v) = %v, want 2", r, got)
	}
	if got := Median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("Median of four = %v, want 2.5", got)
	}
	if Median(nil) != 0 {
		t.Error("Median of nothing is not 0")
	}
	for _, c := range []struct{ b, a Span }{{Span{1}, Span{1, 2}}, {nil, nil}, {Span{1, 2}, Span{1, 0}}} {
		if got := Ratios(c.b, c.a); got != nil {
			t.Errorf("Ratios(%v, %v) = %v, want nil", c.b, c.a, got)
		}
	}
}

// TestSummarizeErrorKinds: the failed requests are counted by kind, an
// error of no kind as "other".
func TestSummarizeErrorKinds(t *testing.T) {
	t.Parallel()
	fail := errors.New("failed")
	s := Summarize([]Sample{{Total: time.Millisecond}, {Err: fail, Kind: "status 502"}, {Err: fail, Kind: "status 502"},
		{Err: fail, Kind: "no HTTP response"}, {Err: fail}}, time.Second)
	want := map[string]int{"status 502": 2, "no HTTP response": 1, "other": 1}
	if s.Errors != 4 || !maps.Equal(s.ErrorKinds, want) {
		t.Errorf("errors %d by kind %v, want 4 by kind %v", s.Errors, s.ErrorKinds, want)
	}
}
