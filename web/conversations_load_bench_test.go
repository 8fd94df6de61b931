package web_test

// Load benchmarks of the conversations API (BENCHMARKS.md, "Conversations
// list, stats and export"), sent over HTTP to a running server: its own
// process on a PostgreSQL cluster with default durability, seeded by
// `parley seed-conversations`. scripts/bench-conversations.sh sets it up and
// runs them; without PARLEY_LOAD_URL they are skipped.
//
//	PARLEY_LOAD_URL=http://127.0.0.1:8091 PARLEY_LOAD_TENANT=bench PARLEY_LOAD_TOKEN=ak_... \
//	PARLEY_LOAD_PID=<server pid> go test -run '^$' -bench BenchmarkConversationsAPI -benchtime 60x ./web/
//
// Requests go one at a time; each case reports p50 and p95 in ms. With
// PARLEY_LOAD_PID the export cases also report the server's peak resident
// memory above what it held before the case (the kernel's peak is reset
// through /proc/<pid>/clear_refs), to show it flat in the row count.

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func BenchmarkConversationsAPI(b *testing.B) {
	base, tenant, token := os.Getenv("PARLEY_LOAD_URL"), os.Getenv("PARLEY_LOAD_TENANT"), os.Getenv("PARLEY_LOAD_TOKEN")
	if base == "" || tenant == "" || token == "" {
		b.Skip("PARLEY_LOAD_URL, PARLEY_LOAD_TENANT and PARLEY_LOAD_TOKEN name a running, seeded server")
	}
	pid := os.Getenv("PARLEY_LOAD_PID")
	today := time.Now().UTC()
	day := func(daysAgo int) string { return today.AddDate(0, 0, -daysAgo).Format(time.DateOnly) }
	path := "/tenants/" + tenant + "/conversations"
	// Each case cycles through its queries, so that no single plan or
	// cached page decides its figures.
	cases := []struct {
		name    string
		queries []string
		export  bool
	}{
		{"stats/30d", []string{"/stats", "/stats?channel=web", "/stats?granularity=week"}, false},
		{"stats/365d", []string{"/stats?granularity=month&from=" + day(364) + "&to=" + day(0),
			"/stats?granularity=week&from=" + day(364) + "&to=" + day(0)}, false},
		{"list/filtered", []string{
			"?channel=web&status=BOT&from=" + day(30) + "&to=" + day(0),
			"?channel=voice&status=ESCALATED&from=" + day(90) + "&to=" + day(0),
			"?channel=api&status=BOT&from=" + day(365) + "&to=" + day(180) + "&page=3",
			"?channel=agent&status=ESCALATED&from=" + day(7) + "&to=" + day(0),
		}, false},
		{"list/search", []string{"?search=refund", "?search=" + url.QueryEscape("order #4321"), "?search=weekends&channel=web",
			"?search=student&from=" + day(30) + "&to=" + day(0)}, false},
		{"export/1000", []string{"/export?limit=1000", "/export?limit=1000&format=ndjson"}, true},
		{"export/5000", []string{"/export?limit=5000", "/export?limit=5000&format=ndjson"}, true},
	}
	client := &http.Client{Timeout: time.Minute}
	get := func(b *testing.B, q string) int64 {
		req, _ := http.NewRequest("GET", base+path+q, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("GET %s: %d, %v", q, resp.StatusCode, err)
		}
		return n
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			for _, q := range tc.queries { // warm the connection, the caches and the statements
				get(b, q)
			}
			var before int64
			if tc.export && pid != "" {
				before = procStatusKiB(b, pid, "VmRSS")
				if err := os.WriteFile("/proc/"+pid+"/clear_refs", []byte("5"), 0); err != nil {
					b.Fatalf("resetting the peak RSS: %v", err)
				}
			}
			durs := make([]time.Duration, 0, b.N)
			var bytes int64
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				bytes += get(b, tc.queries[i%len(tc.queries)])
				durs = append(durs, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(durs)
			q := func(p float64) float64 {
				return float64(durs[min(len(durs)-1, int(p*float64(len(durs))))].Microseconds()) / 1000
			}
			b.ReportMetric(q(0.50), "p50-ms")
			b.ReportMetric(q(0.95), "p95-ms")
			b.ReportMetric(float64(bytes)/float64(len(durs)), "body-B/op")
			if tc.export && pid != "" {
				b.ReportMetric(float64(procStatusKiB(b, pid, "VmHWM")-before)/1024, "peak-rss-growth-MiB")
				b.ReportMetric(float64(before)/1024, "rss-before-MiB")
			}
		})
	}
}

// procStatusKiB reads one of the kB fields of /proc/<pid>/status.
func procStatusKiB(b *testing.B, pid, field string) int64 {
	raw, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatal(fmt.Errorf("no %s in /proc/%s/status", field, pid))
	return 0
}
