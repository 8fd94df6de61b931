package dash

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
		if got := FormFieldName(c.name, c.label); got != c.want {
			t.Errorf("FormFieldName(%q, %q) = %q, want %q", c.name, c.label, got, c.want)
		}
	}
}
