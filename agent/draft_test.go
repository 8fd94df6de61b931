package agent

import "testing"

func TestSplitDraft(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]Draft{
		"SUMMARY: Wants a refund.\nHello, your refund is on its way.": {Summary: "Wants a refund.", Reply: "Hello, your refund is on its way."},
		"  SUMMARY:Asks for hours\n\n  We open at 9.\nSee you!  ":     {Summary: "Asks for hours", Reply: "We open at 9.\nSee you!"},
		"Hello, no summary here.\nSecond line":                        {Reply: "Hello, no summary here.\nSecond line"},
		"SUMMARY: only a summary":                                     {Summary: "only a summary"},
		"":                                                            {},
	} {
		if got := splitDraft(text); got != want {
			t.Errorf("splitDraft(%q) = %+v, want %+v", text, got, want)
		}
	}
}
