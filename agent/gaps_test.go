package agent

import (
	"testing"

	"github.com/parley/parley"
)

// An answer that says early that it does not know is a gap's sign; one
// that answers, or doubts a detail late in a full answer, is not.
func TestGapSignals(t *testing.T) {
	t.Parallel()
	long := "We are open Monday to Friday from nine to five, and on Saturdays from ten to one. Parking is free for visitors, " +
		"and the entrance is on the left of the main building, next to the bakery, past the fountain and the old bridge. " +
		"Tickets are sold at the desk and online, and children under twelve come in free with an adult. " +
		"I'm not sure about public holidays."
	for _, c := range []struct {
		noMatch bool
		answer  string
		want    int
	}{
		{false, "We are open 9 to 5.", 0},
		{false, "I don\u2019t know the answer to that, sorry.", parley.GapNotKnown},
		{true, LocalNoMatch("fr"), parley.GapNoMatch | parley.GapNotKnown},
		{true, "Our prices start at 10 euros.", parley.GapNoMatch},
		{false, long, 0},
		{false, "Je ne sais pas.", parley.GapNotKnown},
	} {
		if got := gapSignals(c.noMatch, c.answer); got != c.want {
			t.Errorf("gapSignals(%v, %q) = %d, want %d", c.noMatch, c.answer, got, c.want)
		}
	}
}
