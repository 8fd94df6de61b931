package admin

import "testing"

func TestWithScheme(t *testing.T) {
	for in, want := range map[string]string{
		"acmebikes.com/faq":           "https://acmebikes.com/faq",
		" www.acme.example ":          "https://www.acme.example",
		"http://acme.example/a":       "http://acme.example/a",
		"not a url":                   "not a url",
		"faq":                         "faq",
		"":                            "",
		"ftp://acme.example/file.txt": "ftp://acme.example/file.txt",
	} {
		if got := withScheme(in); got != want {
			t.Errorf("withScheme(%q) = %q, want %q", in, got, want)
		}
	}
}
