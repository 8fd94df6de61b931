package agent

import (
	"strings"

	"github.com/parley/parley"
)

// gapSignals are the signs of a knowledge gap a turn sees in its own
// answer (stored with it, migration 00055): noMatch, when no entry of the
// knowledge base shared a word with the question (turnCorpus), and an
// answer that says it does not know (saidNotKnown).
func gapSignals(noMatch bool, answer string) int {
	var s int
	if noMatch {
		s |= parley.GapNoMatch
	}
	if saidNotKnown(answer) {
		s |= parley.GapNotKnown
	}
	return s
}

// notKnownPhrases are what an answer that does not know says, in its first
// sentences: few and plain, so that an answer that knows is not counted
// (the local provider's own "no answer" words among them, localWords).
var notKnownPhrases = []string{
	"i don't know", "i do not know", "i don't have information", "i do not have information",
	"i don't have any information", "i do not have any information", "i don't have that information",
	"i could not find", "i couldn't find", "i can't find", "i cannot find", "i was unable to find",
	"i'm not sure", "i am not sure", "i'm afraid i don't", "i don't have an answer", "i do not have an answer",
	"not in my knowledge", "no information about",
	"je ne sais pas", "je n'ai pas trouvé", "je n'ai pas d'information", "je ne trouve pas",
	"dazu habe ich keine antwort", "ich weiß es nicht", "no encontré una respuesta", "no lo sé",
}

// notKnownWindow is how much of an answer's start saidNotKnown reads: an
// answer that doubts one detail late in a full answer still answered.
const notKnownWindow = 240

// saidNotKnown says whether answer says, early, that the assistant does not
// know: one of notKnownPhrases in its first notKnownWindow bytes, read in
// lower case with typographic apostrophes made plain.
func saidNotKnown(answer string) bool {
	if len(answer) > notKnownWindow {
		answer = answer[:notKnownWindow]
	}
	a := strings.ToLower(strings.ReplaceAll(answer, "\u2019", "'"))
	for _, p := range notKnownPhrases {
		if strings.Contains(a, p) {
			return true
		}
	}
	return false
}
