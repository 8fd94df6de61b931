package web_test

import (
	"testing"
	"time"

	"github.com/parley/parley/web/webtest"
)

// TestEarlierToday: shortly after midnight the rows stay on today, in order;
// later in the day they are exactly d before now.
func TestEarlierToday(t *testing.T) {
	t.Parallel()
	midnight := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	for _, now := range []time.Time{midnight.Add(time.Second), midnight.Add(90 * time.Second), midnight.Add(2 * time.Hour)} {
		last := now
		for _, d := range []time.Duration{time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour} {
			got := webtest.EarlierToday(now, 2*time.Hour, d)
			if got.Before(midnight) || !got.Before(last) {
				t.Errorf("at %s, %s before: %s, not on today after %s", now.Format(time.TimeOnly), d, got.Format(time.TimeOnly), last.Format(time.TimeOnly))
			}
			last = got
		}
	}
	if now := midnight.Add(3 * time.Hour); !webtest.EarlierToday(now, 2*time.Hour, time.Hour).Equal(now.Add(-time.Hour)) {
		t.Error("at 03:00, an hour before is not 02:00")
	}
}
