package knowledge

import "testing"

func TestSearchQueries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		terms        []questionTerm
		match, score string
	}{
		{nil, "", ""},
		// rarest first, within the budget; unknown words (0) always match
		{[]questionTerm{{"bike", 450}, {"saddl", 40}, {"xyz", 0}}, "'xyz' | 'saddl' | 'bike'", "'xyz' | 'saddl' | 'bike'"},
		{[]questionTerm{{"bike", 490}, {"saddl", 40}}, "'saddl'", "'saddl' | 'bike'"},
		// every word past the budget: the two rarest together
		{[]questionTerm{{"bike", 5000}, {"check", 600}, {"twice", 3000}}, "'check' & 'twice'", "'check' | 'twice' | 'bike'"},
		{[]questionTerm{{"bike", 5000}, {"bik", 0}, {"twice", 3000}}, "'bik' | 'twice' & 'bike'", "'bik' | 'twice' | 'bike'"},
		{[]questionTerm{{"bike", 5000}}, "'bike'", "'bike'"},
		// quotes and backslashes doubled
		{[]questionTerm{{`o'neil\`, 1}}, `'o''neil\\'`, `'o''neil\\'`},
	} {
		match, score := searchQueries(tc.terms, 50_000)
		if match != tc.match || score != tc.score {
			t.Errorf("searchQueries(%v) = %q, %q; want %q, %q", tc.terms, match, score, tc.match, tc.score)
		}
	}
	// A word in more than half of the entries only scores; alone, it
	// matches nothing.
	if match, score := searchQueries([]questionTerm{{"sell", 300}, {"saddl", 4}}, 300); match != "'saddl'" || score != "'saddl' | 'sell'" {
		t.Errorf("a word in every entry: match %q, score %q", match, score)
	}
	if match, _ := searchQueries([]questionTerm{{"sell", 300}, {"hello", 0}}, 300); match != "'hello'" {
		t.Errorf("a word in every entry and an unknown one: match %q", match)
	}
	if match, _ := searchQueries([]questionTerm{{"sell", 10}}, 10); match != "'sell'" {
		t.Errorf("a small tenant's word in every entry: match %q", match)
	}
	// A tenant within the budget matches on every word.
	if match, _ := searchQueries([]questionTerm{{"bike", 240}, {"saddl", 40}}, matchBudget); match != "'saddl' | 'bike'" {
		t.Errorf("small tenant: match %q", match)
	}
}
