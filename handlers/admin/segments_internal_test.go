package admin

import "testing"

func TestFormFieldName(t *testing.T) {
	for _, c := range []struct{ name, label, want string }{
		{"", "Full name", "full_name"},
		{"Full Name", "Whatever", "full_name"},
		{"email", "Your email", "email"},
		{"", "Téléphone portable", "telephone_portable"},
		{"", "2nd address", "field_2nd_address"},
		{"", "   ", ""},
		{"", "¿?", "field"},
		{"company_size", "", "company_size"},
	} {
		if got := formFieldName(c.name, c.label); got != c.want {
			t.Errorf("formFieldName(%q, %q) = %q, want %q", c.name, c.label, got, c.want)
		}
	}
}

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
