package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Sample is one request: its time to the first byte of the answer (the
// first SSE data line of a stream), to the end of the answer, and its error
// with its kind (Kind: "no HTTP response", "status 503", "stream cut", ...;
// empty for an error of no kind in particular).
type Sample struct {
	TTFB, Total time.Duration
	Err         error
	Kind        string
}

// Summary is what one measurement of n requests gives.
type Summary struct {
	N, Errors        int
	FirstError       string
	ErrorKinds       map[string]int // the failed requests by Sample.Kind
	TTFB50, TTFB99   time.Duration
	Turn50, Turn99   time.Duration
	PerSecond        float64 // successful requests per second of wall time
	Elapsed          time.Duration
	successfulTTFBs  []time.Duration
	successfulTotals []time.Duration
}

// Quantile is the q-quantile of ds by nearest rank (the smallest value with
// at least q of the values at or below it); 0 when ds is empty.
func Quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := min(max(int(math.Ceil(q*float64(len(s))))-1, 0), len(s)-1)
	return s[i]
}

// Summarize gives the percentiles of the successful samples, the count of
// failed ones and the rate of successful ones over elapsed.
func Summarize(samples []Sample, elapsed time.Duration) Summary {
	s := Summary{N: len(samples), Elapsed: elapsed}
	for _, x := range samples {
		if x.Err != nil {
			if s.Errors == 0 {
				s.FirstError = x.Err.Error()
			}
			s.Errors++
			if s.ErrorKinds == nil {
				s.ErrorKinds = map[string]int{}
			}
			s.ErrorKinds[cmp.Or(x.Kind, "other")]++
			continue
		}
		s.successfulTTFBs = append(s.successfulTTFBs, x.TTFB)
		s.successfulTotals = append(s.successfulTotals, x.Total)
	}
	s.TTFB50, s.TTFB99 = Quantile(s.successfulTTFBs, 0.50), Quantile(s.successfulTTFBs, 0.99)
	s.Turn50, s.Turn99 = Quantile(s.successfulTotals, 0.50), Quantile(s.successfulTotals, 0.99)
	if elapsed > 0 {
		s.PerSecond = float64(len(s.successfulTTFBs)) / elapsed.Seconds()
	}
	return s
}

// ms formats d in milliseconds, with two decimals below 10 ms.
func ms(d time.Duration) string {
	f := float64(d) / float64(time.Millisecond)
	if f < 10 {
		return fmt.Sprintf("%.2f", f)
	}
	return fmt.Sprintf("%.0f", f)
}

// Span is the values one figure took over the rounds, shown as "min–max"
// (one value when they agree at the precision shown).
type Span []float64

// Format shows the span with format applied to its ends.
func (s Span) Format(format string) string {
	if len(s) == 0 {
		return "–"
	}
	lo, hi := Thousands(fmt.Sprintf(format, slices.Min(s))), Thousands(fmt.Sprintf(format, slices.Max(s)))
	if lo == hi {
		return lo
	}
	return lo + "–" + hi
}

// Thousands puts commas in the integer part of a formatted number: 1344 → 1,344.
func Thousands(s string) string {
	intPart, frac, hasFrac := strings.Cut(s, ".")
	neg := strings.HasPrefix(intPart, "-")
	intPart = strings.TrimPrefix(intPart, "-")
	var b strings.Builder
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	out := b.String()
	if neg {
		out = "-" + out
	}
	if hasFrac {
		out += "." + frac
	}
	return out
}

// Ratios is b[i] / a[i] for each round i; nil unless both have the same
// number of rounds, at least one, and no a[i] is zero.
func Ratios(b, a Span) []float64 {
	if len(a) == 0 || len(a) != len(b) {
		return nil
	}
	out := make([]float64, len(a))
	for i := range a {
		if a[i] == 0 {
			return nil
		}
		out[i] = b[i] / a[i]
	}
	return out
}

// Median is the middle value of xs (the mean of the two middle ones for an
// even count); 0 when xs is empty.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
