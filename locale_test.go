package parley

import "testing"

func TestLocaleLanguage(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"fr-CA": "fr", "FR_ca": "fr", " en ": "en", "de": "de", "": ""} {
		if got := LocaleLanguage(in); got != want {
			t.Errorf("LocaleLanguage(%q) = %q, want %q", in, got, want)
		}
	}
}
