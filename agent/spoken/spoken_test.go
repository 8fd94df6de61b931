package spoken

import (
	"strings"
	"testing"
)

func TestSpokenText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ locale, in, want string }{
		// Markdown and emojis.
		{"en-US", "**Great news!** We are *open* today 🎉", "Great news! We are open today"},
		{"en", "🎉 It is free 🎉. Thanks ✅!", "It is free. Thanks!"},
		{"en", "## Hours\n- Monday: closed\n- Tuesday: open\n", "Hours. Monday: closed. Tuesday: open."},
		{"en", "See [our page](https://example.com/hours) or `call us`.", "See our page or call us."},
		{"en", "Visit https://www.example.com/contact today 👍🏽", "Visit example.com/contact today"},
		{"en", "| Size | Price |\n|---|---|\n| Small | 5 |", "Size, Price. Small, five"},
		{"en", "1. Call us\n2. Book a visit", "Call us. Book a visit"},
		{"en", "Keep snake_case and __this__ __bold__.", "Keep snake_case and this bold."},
		// Dates.
		{"en", "The visit is on 2026-11-24.", "The visit is on November twenty-fourth, twenty twenty-six."},
		{"en", "Due 11/03/2026", "Due November third, twenty twenty-six"},
		{"en", "Since 2005 and 1999.", "Since two thousand five and nineteen ninety-nine."},
		// Times.
		{"en", "Come at 9:00 or 14:30.", "Come at nine o'clock or two thirty p.m."},
		{"en", "Open 9 am to 5:30 pm, closed at 12:00.", "Open nine a.m. to five thirty p.m., closed at noon."},
		{"en", "At 9:05.", "At nine oh five."},
		// Prices.
		{"en", "It costs $12.50 or €1,200.", "It costs twelve dollars and fifty cents or one thousand two hundred euros."},
		{"en", "Only 1 dollar, or 99 EUR.", "Only one dollar, or ninety-nine euros."},
		{"en", "A £3 fee and 20% off, 2.5% tax.", "A three pounds fee and twenty percent off, two point five percent tax."},
		// Phone numbers.
		{"en", "Call +1 415 555 0100.", "Call plus one, four one five, five five five, zero one zero zero."},
		{"en", "Call (415) 555-0100 or +14155550100.", "Call four one five, five five five, zero one zero zero or plus one, four one five, five five five, zero one zero zero."},
		// Addresses, ordinals, numbers.
		{"en", "We are at 221 Baker St, London, on the 3rd floor.", "We are at two hundred twenty-one Baker Street, London, on the third floor."},
		{"en", "12 Main Ave, San Francisco 94103", "twelve Main Avenue, San Francisco nine four one zero three"},
		{"en", "We have 1,250 clients and 3.75 stars.", "We have one thousand two hundred fifty clients and three point seven five stars."},
		{"en", "The 21st and 42nd.", "The twenty-first and forty-second."},

		{"fr-FR", "**Bonne nouvelle** : nous sommes ouverts 😀", "Bonne nouvelle : nous sommes ouverts"},
		{"fr", "## Horaires\n- Lundi : fermé\n- Mardi : ouvert", "Horaires. Lundi : fermé. Mardi : ouvert"},
		{"fr", "Le rendez-vous est le 2026-11-24.", "Le rendez-vous est le vingt-quatre novembre deux mille vingt-six."},
		{"fr", "Le 01/12/2026 à 9h.", "Le premier décembre deux mille vingt-six à neuf heures."},
		{"fr", "Venez à 14h30 ou 14:30, pas à 12h.", "Venez à quatorze heures trente ou quatorze heures trente, pas à midi."},
		{"fr", "Entre 9 h et 1 h 15.", "Entre neuf heures et une heure quinze."},
		{"fr", "Cela coûte 12,50 € ou 1 500 €.", "Cela coûte douze euros cinquante ou mille cinq cents euros."},
		{"fr", "Seulement 1 €, ou 80 euros, ou 21 $.", "Seulement un euro, ou quatre-vingts euros, ou vingt et un dollars."},
		{"fr", "Une remise de 20 % et 5,5 % de TVA.", "Une remise de vingt pour cent et cinq virgule cinq pour cent de TVA."},
		{"fr", "Appelez le 06 12 34 56 78.", "Appelez le zéro six, douze, trente-quatre, cinquante-six, soixante-dix-huit."},
		{"fr", "Ou le +33612345678.", "Ou le plus trente-trois, six, douze, trente-quatre, cinquante-six, soixante-dix-huit."},
		{"fr", "Nous sommes au 12 bd Haussmann, 75009 Paris, au 2e étage.", "Nous sommes au douze boulevard Haussmann, soixante-quinze zéro zéro neuf Paris, au deuxième étage."},
		{"fr", "Le 1er mai, 71 ou 91 personnes, 200 000 visiteurs.", "Le premier mai, soixante et onze ou quatre-vingt-onze personnes, deux cent mille visiteurs."},
		{"fr", "En 2026, au 21e siècle.", "En deux mille vingt-six, au vingt et unième siècle."},

		// Another language: the clean-up only.
		{"de-DE", "**Hallo** 👋 um 9:30 Uhr", "Hallo um 9:30 Uhr"},
	} {
		if got := Text(tc.in, tc.locale); got != tc.want {
			t.Errorf("Text(%q, %s)\n got %q\nwant %q", tc.in, tc.locale, got, tc.want)
		}
	}
}

// TestSpeakerStream feeds a reply in small pieces that cut numbers, dates
// and markdown in two: what is spoken is what Text gives for the
// whole, and nothing is spoken before a sentence is complete.
func TestSpeakerStream(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ locale, text string }{
		{"en", "Hello! **Tuesday** 2026-11-24 at 9:30 am is free. It costs $1,250.50 in total.\n- Call +1 415 555 0100\n- Or come by"},
		{"en", "See [our page, with the hours](https://example.com/a, b) or call (415) 555-0100, then: come on 11/03/2026, at 2:30 pm."},
		{"fr", "Bonjour ! Mardi 24/11/2026 à 14h30, c'est libre. Cela coûte 1 250,50 € au total.\n- Appelez le 06 12 34 56 78"},
		{"fr", "Le prix : 12,50 €, soit 3,5 % de moins… Venez au 12 bd Haussmann, 75009 Paris."},
	} {
		sp := NewSpeaker(tc.locale)
		var out strings.Builder
		var pieces []string
		for i := 0; i < len(tc.text); i += 3 {
			got := sp.Write(tc.text[i:min(i+3, len(tc.text))])
			if got != "" {
				pieces = append(pieces, got)
			}
			out.WriteString(got)
		}
		out.WriteString(sp.Flush())
		if want := Text(tc.text, tc.locale); out.String() != want {
			t.Errorf("%s streamed\n got %q\nwant %q", tc.locale, out.String(), want)
		}
		if len(pieces) < 3 {
			t.Errorf("%s: spoken in %d pieces, want one per sentence: %q", tc.locale, len(pieces), pieces)
		}
		for _, p := range pieces {
			if strings.ContainsAny(p, "0123456789*") {
				t.Errorf("%s: piece %q still holds digits or markdown", tc.locale, p)
			}
		}
	}
	if got := NewSpeaker("en").Write("Just three words"); got != "" {
		t.Errorf("an unfinished sentence was spoken: %q", got)
	}
	// A clause is spoken as soon as it is complete.
	sp := NewSpeaker("en")
	if got := sp.Write("Hello, "); got != "Hello, " {
		t.Errorf("first clause: %q", got)
	}
	if got := sp.Write("it costs $12,"); got != "" {
		t.Errorf("a comma inside a number cut it: %q", got)
	}
	if got := sp.Write("500 today."); got != "" || sp.Flush() != "it costs twelve thousand five hundred dollars today." {
		t.Errorf("the price was cut")
	}
}

// BenchmarkSpokenText renders a typical spoken sentence (what the voice
// channel adds to each piece of a reply).
//
//	go test -run '^$' -bench BenchmarkSpokenText -benchmem ./agent/spoken/
func BenchmarkSpokenText(b *testing.B) {
	for _, tc := range []struct{ locale, text string }{
		{"en", "Yes, **Tuesday** 2026-11-24 at 9:30 am is free, and the visit costs $80.50 in total. "},
		{"fr", "Oui, mardi 24/11/2026 à 14h30, c'est libre ; la visite coûte 80,50 € au total. "},
		{"en-words", "Of course, someone can come by and have a look at it for you. "},
	} {
		b.Run(tc.locale, func(b *testing.B) {
			for b.Loop() {
				Text(tc.text, tc.locale[:2])
			}
		})
	}
}
