package admin

import (
	"testing"
	"time"
)

func TestWaitText(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		0: "0 s", 45*time.Second + 400*time.Millisecond: "45 s", 59*time.Second + 600*time.Millisecond: "1 min",
		3*time.Minute + 20*time.Second: "3 min 20 s", time.Hour: "1 h", 2*time.Hour + 5*time.Minute + 10*time.Second: "2 h 5 min",
	} {
		if got := waitText(d); got != want {
			t.Errorf("waitText(%v) = %q, want %q", d, got, want)
		}
	}
}
