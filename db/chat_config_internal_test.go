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
	data := func(chars int) parley.PromptData {
		return parley.PromptData{Corpus: []parley.CorpusEntry{{Title: "t", Content: strings.Repeat("x", chars)}}}
	}
	heavy := chatPromptBytes/16 + 1
	c.keepPrompt(promptKey{tenantID: "a"}, cachedPrompt{data: data(heavy), at: now})
	if _, ok := c.prompt(promptKey{tenantID: "a"}, now); ok || c.promptBytes != 0 {
		t.Errorf("an entry of %d bytes was kept (budget %d)", heavy, chatPromptBytes)
	}

	// Entries of a sixteenth of the budget less a little: sixteen fit, the
	// seventeenth empties the cache first.
	each := chatPromptBytes/16 - 4096
	for i := range 17 {
		c.keepPrompt(promptKey{tenantID: string(rune('a' + i))}, cachedPrompt{data: data(each), at: now})
		if c.promptBytes > chatPromptBytes {
			t.Fatalf("after %d entries: %d bytes kept, budget %d", i+1, c.promptBytes, chatPromptBytes)
		}
	}
	if len(c.prompts) != 1 || c.promptBytes != promptWeight(data(each)) {
		t.Errorf("after the seventeenth: %d entries of %d bytes, want the last alone", len(c.prompts), c.promptBytes)
	}
	if _, ok := c.prompt(promptKey{tenantID: string(rune('a' + 16))}, now); !ok {
		t.Error("the entry that emptied the cache is not in it")
	}

	// Replacing an entry counts it once.
	k := promptKey{tenantID: "q"}
	c.keepPrompt(k, cachedPrompt{data: data(1000), at: now})
	before := c.promptBytes
	c.keepPrompt(k, cachedPrompt{data: data(2000), at: now})
	if got := c.promptBytes - before; got != 1000 {
		t.Errorf("replacing an entry of 1,000 characters by one of 2,000 added %d bytes, want 1000", got)
	}

	// And an entry older than the TTL is not served.
	if _, ok := c.prompt(k, now.Add(chatConfigTTL+time.Second)); ok {
		t.Error("an expired entry was served")
	}
}
