package db

import (
	"strings"
	"testing"
	"time"

	"github.com/parley/parley"
)

// The prompt data the chat's cache keeps weighs at most chatPromptBytes:
// an entry over a sixteenth of it is never kept, and the cache is emptied
// when the next would pass the budget.
func TestChatConfigCacheWeight(t *testing.T) {
	var c chatConfigCache
	now := time.Now()
	keep := func(k promptKey, p parley.PromptData) {
		c.prompts.keep(k, p, promptWeight(p), chatPromptBytes, now)
	}
	data := func(chars int) parley.PromptData {
		return parley.PromptData{Corpus: []parley.CorpusEntry{{Title: "t", Content: strings.Repeat("x", chars)}}}
	}
	heavy := chatPromptBytes/16 + 1
	keep(promptKey{tenantID: "a"}, data(heavy))
	if _, ok := c.prompts.get(promptKey{tenantID: "a"}, now); ok || c.prompts.weight != 0 {
		t.Errorf("an entry of %d bytes was kept (budget %d)", heavy, chatPromptBytes)
	}

	// Entries of a sixteenth of the budget less a little: sixteen fit, the
	// seventeenth empties the cache first.
	each := chatPromptBytes/16 - 4096
	for i := range 17 {
		keep(promptKey{tenantID: string(rune('a' + i))}, data(each))
		if c.prompts.weight > chatPromptBytes {
			t.Fatalf("after %d entries: %d bytes kept, budget %d", i+1, c.prompts.weight, chatPromptBytes)
		}
	}
	if len(c.prompts.entries) != 1 || c.prompts.weight != promptWeight(data(each)) {
		t.Errorf("after the seventeenth: %d entries of %d bytes, want the last alone", len(c.prompts.entries), c.prompts.weight)
	}
	if _, ok := c.prompts.get(promptKey{tenantID: string(rune('a' + 16))}, now); !ok {
		t.Error("the entry that emptied the cache is not in it")
	}

	// Replacing an entry counts it once.
	k := promptKey{tenantID: "q"}
	keep(k, data(1000))
	before := c.prompts.weight
	keep(k, data(2000))
	if got := c.prompts.weight - before; got != 1000 {
		t.Errorf("replacing an entry of 1,000 characters by one of 2,000 added %d bytes, want 1000", got)
	}

	// And an entry older than the TTL is not served.
	if _, ok := c.prompts.get(k, now.Add(chatConfigTTL+time.Second)); ok {
		t.Error("an expired entry was served")
	}
}
