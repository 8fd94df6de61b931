// Package spoken puts the voice channel's replies into words: they are read aloud by the
// orchestrator's text-to-speech voice, so what the model wrote for a screen
// is put into words before it is sent. The prompt asks the model to write
// for speech (agent's promptVoice); Text is the deterministic pass that makes
// sure of it: no markdown, no emojis, and dates, times, prices, percentages,
// phone numbers, ordinals, postcodes, street abbreviations and numbers in
// words, in English or French. Other languages get the clean-up only: their
// numbers are left to the voice.
package spoken

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Text rewrites text for a text-to-speech voice speaking locale's
// language (a BCP-47 tag; "fr..." is French, "en..." or "" English).
func Text(text, locale string) string {
	lang := spokenLanguage(locale)
	s := spokenClean(text)
	if lang == "" {
		return s
	}
	digits := strings.ContainsAny(s, "0123456789")
	for _, rule := range spokenRules {
		if !digits && !rule.words || rule.marks != "" && !strings.ContainsAny(s, rule.marks) {
			continue // most clauses hold no number: their rules have nothing to match
		}
		if out := replaceSubmatches(rule, lang, s); out != s {
			s, digits = out, strings.ContainsAny(out, "0123456789")
		}
	}
	return strings.ReplaceAll(s, ".m..", ".m.") // a time that ended the sentence
}

// Speaker renders a streamed reply piece by piece: Write takes the model's
// next text and returns what can be spoken now, whole sentences or clauses
// rendered with Text (so that a number or a date is never cut between
// two pieces); Flush returns the rest at the end.
type Speaker struct {
	locale string
	buf    strings.Builder
}

// NewSpeaker returns a Speaker for locale's language.
func NewSpeaker(locale string) *Speaker { return &Speaker{locale: locale} }

// spokenPieceMax is how long a piece without a sentence end may grow before
// it is cut at a space.
const spokenPieceMax = 240

// Write adds delta and returns the sentences or clauses it completed,
// rendered; "" while none is complete.
func (sp *Speaker) Write(delta string) string {
	sp.buf.WriteString(delta)
	s := sp.buf.String()
	cut := spokenCut(s)
	if cut <= 0 {
		return ""
	}
	sp.buf.Reset()
	sp.buf.WriteString(s[cut:])
	return sp.render(s[:cut])
}

// Flush returns what is left, rendered.
func (sp *Speaker) Flush() string {
	s := sp.buf.String()
	sp.buf.Reset()
	return strings.TrimRight(sp.render(s), " ")
}

// render renders one piece, keeping one space after it when it ended with
// one, so that pieces join as the model wrote them.
func (sp *Speaker) render(piece string) string {
	out := Text(piece, sp.locale)
	if out != "" && strings.TrimRightFunc(piece, unicode.IsSpace) != piece {
		out += " "
	}
	return out
}

// spokenCut is the end of the last whole sentence or clause of s (its
// punctuation and the space after it: . ! ? ; : , or …), or of a line,
// outside brackets (a markdown link is never cut); failing that, for a long
// s, its last space; else 0. A clause is enough: the voice starts on the
// first words while the model writes the rest, and a number, a time or a
// price is written without a space after a comma or colon inside it.
func spokenCut(s string) int {
	cut, depth := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '[' || c == '(':
			depth++
		case (c == ']' || c == ')') && depth > 0:
			depth--
		case c == '\n':
			cut, depth = i+1, 0
		case (c == ' ' || c == '\t') && depth == 0 && i > 0 &&
			(strings.IndexByte(".!?;:,", s[i-1]) >= 0 || strings.HasSuffix(s[:i], "…")):
			cut = i + 1
		}
	}
	if cut == 0 && len(s) > spokenPieceMax {
		return strings.LastIndexByte(s, ' ') + 1
	}
	return cut
}

func spokenLanguage(locale string) string {
	l := strings.ToLower(strings.TrimSpace(locale))
	switch {
	case l == "" || l == "en" || strings.HasPrefix(l, "en-") || strings.HasPrefix(l, "en_"):
		return "en"
	case l == "fr" || strings.HasPrefix(l, "fr-") || strings.HasPrefix(l, "fr_"):
		return "fr"
	}
	return ""
}

// The clean-up: markdown and emojis out, one line.
var (
	mdImage    = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	mdLink     = regexp.MustCompile(`\[([^\]]+)\]\([^)]*\)`)
	mdHeading  = regexp.MustCompile(`^\s{0,3}#{1,6}\s*`)
	mdBullet   = regexp.MustCompile(`^\s*(?:[-*+•]|\d{1,2}[.)])\s+`)
	mdQuote    = regexp.MustCompile(`^\s*>\s?`)
	mdRule     = regexp.MustCompile(`^\s*(?:[-*_]\s*){3,}$`)
	mdEmphasis = regexp.MustCompile(`\*+|~~|` + "`+")
	mdUnder    = regexp.MustCompile(`(^|[\s(])_+|_+($|[\s).,!?;:])`)
	bareURL    = regexp.MustCompile(`https?://(?:www\.)?`)
	emojiRun   = regexp.MustCompile(`[ \t]*\x00+`)
)

func spokenClean(text string) string {
	// A text that ends a line ends its last sentence too.
	ended := strings.HasSuffix(strings.TrimRight(text, " \t"), "\n")
	var lines []string
	for line := range strings.SplitSeq(text, "\n") {
		// Each pattern runs only when its mark is in the line: most clauses
		// are plain text.
		if strings.ContainsAny(line, "-*_") && mdRule.MatchString(line) {
			continue
		}
		if strings.ContainsAny(line, "#>-*+•0123456789") {
			line = mdHeading.ReplaceAllString(line, "")
			line = mdQuote.ReplaceAllString(line, "")
			line = mdBullet.ReplaceAllString(line, "")
		}
		if strings.Contains(line, "](") {
			line = mdImage.ReplaceAllString(line, "$1")
			line = mdLink.ReplaceAllString(line, "$1")
		}
		if strings.Contains(line, "://") {
			line = bareURL.ReplaceAllString(line, "")
		}
		if strings.ContainsAny(line, "*~`") {
			line = mdEmphasis.ReplaceAllString(line, "")
		}
		if strings.Contains(line, "_") {
			line = mdUnder.ReplaceAllString(mdUnder.ReplaceAllString(line, "$1$2"), "$1$2") // twice: matches share their spaces
		}
		if strings.Contains(line, "|") { // a table row: its cells, one after the other
			cells := strings.FieldsFunc(line, func(r rune) bool { return r == '|' })
			var kept []string
			for _, c := range cells {
				if c = strings.TrimSpace(c); c != "" && strings.Trim(c, "-: ") != "" {
					kept = append(kept, c)
				}
			}
			line = strings.Join(kept, ", ")
		}
		if strings.IndexFunc(line, isEmoji) >= 0 {
			line = emojiRun.ReplaceAllString(strings.Map(func(r rune) rune {
				if isEmoji(r) {
					return 0
				}
				return r
			}, line), "") // an emoji goes with the spaces before it: "free 🎉." is "free."
		}
		line = strings.Join(strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' }), " ")
		if line == "" {
			continue
		}
		lines = append(lines, line)
	}
	// Lines become sentences: a line without an end gets a full stop.
	last := len(lines) - 1
	if ended {
		last = len(lines)
	}
	for i := range last {
		if !strings.ContainsRune(".!?;:,…", lastRune(lines[i])) {
			lines[i] += "."
		}
	}
	return strings.Join(lines, " ")
}

func lastRune(s string) rune {
	r := []rune(s)
	return r[len(r)-1]
}

// isEmoji reports pictographs, dingbats, arrows and the joiners, selectors
// and modifiers that build emoji sequences.
func isEmoji(r rune) bool {
	switch {
	case r >= 0x1F000 && r <= 0x1FAFF, r >= 0x2600 && r <= 0x27BF, r >= 0x2B00 && r <= 0x2BFF,
		r >= 0x2190 && r <= 0x21FF, r >= 0xE0020 && r <= 0xE007F, r >= 0xFE00 && r <= 0xFE0F,
		r == 0x200D, r == 0x20E3, r == 0x2122, r == 0x00A9, r == 0x00AE:
		return true
	}
	return false
}

// replaceSubmatches rewrites s's matches of the rule's expression with its
// function, matching once.
func replaceSubmatches(rule spokenRule, lang, s string) string {
	all := rule.re.FindAllStringSubmatchIndex(s, -1)
	if all == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, loc := range all {
		m := make([]string, len(loc)/2)
		for i := range m {
			if loc[2*i] >= 0 {
				m[i] = s[loc[2*i]:loc[2*i+1]]
			}
		}
		out, ok := rule.fn(lang, m)
		if !ok {
			out = m[0]
		}
		b.WriteString(s[last:loc[0]])
		b.WriteString(out)
		last = loc[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// spokenRule rewrites each match of re; fn gets the submatches and says
// whether it rewrote (false leaves the match as written). A rule matches
// digits unless words says it matches words alone; one with marks matches
// only text holding one of them. Both only spare the regular expression a
// text it cannot match.
type spokenRule struct {
	re    *regexp.Regexp
	fn    func(lang string, m []string) (string, bool)
	words bool
	marks string
}

// spokenRules run in order: a rule's words are not seen as digits by the
// next ones.
var spokenRules = []spokenRule{
	{regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})\b`), spokenISODate, false, "-"},
	{regexp.MustCompile(`\b(\d{1,2})/(\d{1,2})/(\d{4})\b`), spokenSlashDate, false, "/"},
	{regexp.MustCompile(`(\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,6}|\(\d{3}\) ?\d{3}[ .-]\d{4}\b|\b\d{3}[ .-]\d{3}[ .-]\d{4}\b|\b0\d(?:[ .-]?\d{2}){4}\b)`), spokenPhone, false, ""},
	{regexp.MustCompile(`(?i)\b(\d{1,2})(?::(\d{2}))?\s*([ap])\.?m\.?(?:\s|$|[,;!?])`), spokenTime12, false, "aApP"},
	{regexp.MustCompile(`\b(\d{1,2}):(\d{2})\b`), spokenTime24, false, ":"},
	{regexp.MustCompile(`\b(\d{1,2}) ?h(?: ?(\d{2}))?\b`), spokenTimeH, false, "h"},
	{regexp.MustCompile(`([$€£])\s?(` + spokenAmount + `)`), spokenPriceBefore, false, "$€£"},
	{regexp.MustCompile(`(?i)\b(` + spokenAmount + `)\s?(€|\$|£|eur\b|euros?\b|usd\b|dollars?\b|gbp\b)`), spokenPriceAfter, false, "€$£eEuUdDgG"},
	{regexp.MustCompile(`(\d+(?:[.,]\d+)?)\s?%`), spokenPercent, false, "%"},
	{regexp.MustCompile(`\b(\d+)(st|nd|rd|th|er|re|e|ème|eme)\b`), spokenOrdinal, false, ""},
	{regexp.MustCompile(`\b([A-Z][a-zé]+ )(St|Ave|Rd|Blvd|Ln|Sq)\b`), spokenStreet, true, "SARBL"},
	{regexp.MustCompile(`(?i)\b(bd|boul|av|pl)\.? ([A-Za-zÀ-ÿ])`), spokenRue, true, ""},
	{regexp.MustCompile(`\b\d{1,3}(?:[,\x{00A0}\x{202F} ]\d{3})+(?:[.,]\d+)?\b|\b\d+(?:[.,]\d+)?\b`), spokenNumber, false, ""},
}

// spokenAmount is a written amount: 1,200.50, 1 200,50, 12, 12.5.
const spokenAmount = `\d{1,3}(?:[,. \x{00A0}\x{202F}]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?`

// spokenGrouped is the integer part of a number written with thousands
// separators.
var spokenGrouped = regexp.MustCompile(`^\d{1,3}(?:[,\x{00A0}\x{202F} ]\d{3})+`)

var monthsEN = []string{"January", "February", "March", "April", "May", "June", "July", "August",
	"September", "October", "November", "December"}
var monthsFR = []string{"janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août",
	"septembre", "octobre", "novembre", "décembre"}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func spokenDate(lang string, y, m, d int) (string, bool) {
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return "", false
	}
	if lang == "fr" {
		day := frenchCardinal(d)
		if d == 1 {
			day = "premier"
		}
		return day + " " + monthsFR[m-1] + " " + frenchCardinal(y), true
	}
	return monthsEN[m-1] + " " + englishOrdinal(d) + ", " + englishYear(y), true
}

func spokenISODate(lang string, m []string) (string, bool) {
	return spokenDate(lang, atoi(m[1]), atoi(m[2]), atoi(m[3]))
}

// spokenSlashDate reads month/day/year in English, day/month/year in French.
func spokenSlashDate(lang string, m []string) (string, bool) {
	a, b, y := atoi(m[1]), atoi(m[2]), atoi(m[3])
	if lang == "fr" {
		return spokenDate(lang, y, b, a)
	}
	return spokenDate(lang, y, a, b)
}

func spokenTime(lang string, h, min int, meridiem string) (string, bool) {
	if h > 23 || min > 59 || meridiem != "" && (h < 1 || h > 12) {
		return "", false
	}
	if lang == "fr" {
		if meridiem == "p" && h < 12 {
			h += 12
		} else if meridiem == "a" && h == 12 {
			h = 0
		}
		var s string
		switch h {
		case 0:
			s = "minuit"
		case 12:
			s = "midi"
		case 1:
			s = "une heure"
		default:
			s = frenchCardinal(h) + " heures"
		}
		if min > 0 {
			s += " " + frenchCardinal(min)
		}
		return s, true
	}
	suffix := ""
	switch {
	case meridiem == "a":
		suffix = " a.m."
	case meridiem == "p":
		suffix = " p.m."
	case h == 0 && min == 0:
		return "midnight", true
	case h == 12 && min == 0:
		return "noon", true
	case h == 0:
		h, suffix = 12, " a.m."
	case h > 12:
		h, suffix = h-12, " p.m."
	}
	s := englishCardinal(h)
	switch {
	case min == 0 && suffix == "":
		s += " o'clock"
	case min == 0:
	case min < 10:
		s += " oh " + englishCardinal(min)
	default:
		s += " " + englishCardinal(min)
	}
	return s + suffix, true
}

func spokenTime12(lang string, m []string) (string, bool) {
	end := m[0][len(strings.TrimRight(m[0], " \t,;!?")):] // the space or mark after, kept
	s, ok := spokenTime(lang, atoi(m[1]), atoi(m[2]), strings.ToLower(m[3]))
	return s + end, ok
}

func spokenTime24(lang string, m []string) (string, bool) {
	return spokenTime(lang, atoi(m[1]), atoi(m[2]), "")
}

// spokenTimeH reads the French 14h30, 9h; in English it leaves them.
func spokenTimeH(lang string, m []string) (string, bool) {
	if lang != "fr" {
		return "", false
	}
	return spokenTime(lang, atoi(m[1]), atoi(m[2]), "")
}

// parseAmount reads a written amount, in whole units and cents: the last
// separator followed by one or two digits is the decimal mark, the others
// group thousands.
func parseAmount(s string) (units, cents int64, ok bool) {
	s = strings.TrimRight(s, "., \u00a0\u202f")
	last := strings.LastIndexAny(s, ".,")
	intPart, frac := s, ""
	if last >= 0 && len(s)-last-1 <= 2 {
		intPart, frac = s[:last], s[last+1:]
	}
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		if r == ',' || r == '.' || r == ' ' || r == '\u00a0' || r == '\u202f' {
			return -1
		}
		return 'x'
	}, intPart)
	if digits == "" || strings.Contains(digits, "x") || len(digits) > 12 {
		return 0, 0, false
	}
	units, _ = strconv.ParseInt(digits, 10, 64)
	if frac != "" {
		if len(frac) == 1 {
			frac += "0"
		}
		c, err := strconv.ParseInt(frac, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		cents = c
	}
	return units, cents, true
}

func spokenPrice(lang, amount, currency string) (string, bool) {
	units, cents, ok := parseAmount(amount)
	if !ok {
		return "", false
	}
	var one, many, centOne, centMany string
	switch strings.ToLower(currency) {
	case "€", "eur", "euro", "euros":
		one, many, centOne, centMany = "euro", "euros", "cent", "cents"
	case "$", "usd", "dollar", "dollars":
		one, many, centOne, centMany = "dollar", "dollars", "cent", "cents"
	case "£", "gbp":
		one, many, centOne, centMany = "pound", "pounds", "penny", "pence"
		if lang == "fr" {
			one, many = "livre", "livres"
		}
	default:
		return "", false
	}
	var s string
	if lang == "fr" {
		unit := many
		if units < 2 {
			unit = one
		}
		s = frenchCardinal(int(units))
		if units == 1 && unit == "livre" {
			s = "une"
		}
		s += " " + unit
		if units >= 1_000_000 && units%1_000_000 == 0 {
			s = frenchCardinal(int(units)) + " d'" + unit
		}
		if cents > 0 {
			s += " " + frenchCardinal(int(cents))
		}
		return s, true
	}
	unit := many
	if units == 1 {
		unit = one
	}
	s = englishCardinal(int(units)) + " " + unit
	if cents > 0 {
		cu := centMany
		if cents == 1 {
			cu = centOne
		}
		s += " and " + englishCardinal(int(cents)) + " " + cu
	}
	return s, true
}

func spokenPriceBefore(lang string, m []string) (string, bool) {
	return spokenPrice(lang, m[2], m[1])
}

func spokenPriceAfter(lang string, m []string) (string, bool) {
	return spokenPrice(lang, m[1], m[2])
}

func spokenPercent(lang string, m []string) (string, bool) {
	n, ok := spokenDecimal(lang, m[1])
	if !ok {
		return "", false
	}
	if lang == "fr" {
		return n + " pour cent", true
	}
	return n + " percent", true
}

// spokenDecimal reads 12, 2.5 or 2,5 (the mark is the decimal one).
func spokenDecimal(lang, s string) (string, bool) {
	whole, frac, hasFrac := strings.Cut(strings.ReplaceAll(s, ",", "."), ".")
	n, err := strconv.Atoi(whole)
	if err != nil || n > 999_999_999 {
		return "", false
	}
	cardinal, point := englishCardinal, " point"
	if lang == "fr" {
		cardinal, point = frenchCardinal, " virgule"
	}
	out := cardinal(n)
	if hasFrac {
		if lang == "fr" && !strings.HasPrefix(frac, "0") && len(frac) <= 2 {
			return out + point + " " + cardinal(atoi(frac)), true
		}
		out += point
		for _, d := range frac {
			out += " " + cardinal(int(d-'0'))
		}
	}
	return out, true
}

// spokenPhone reads a phone number by its groups: digit by digit in
// English, by pairs in French (zéro six, douze, ...), "plus" for +.
func spokenPhone(lang string, m []string) (string, bool) {
	raw := m[1]
	groups := strings.FieldsFunc(raw, func(r rune) bool { return r == ' ' || r == '.' || r == '-' || r == '(' || r == ')' })
	plus := strings.HasPrefix(raw, "+")
	if len(groups) == 1 { // written without separators: group it
		groups = phoneGroups(groups[0], plus)
	}
	var parts []string
	for i, g := range groups {
		g = strings.TrimPrefix(g, "+")
		var w string
		if lang == "fr" {
			w = frenchDigitGroup(g)
		} else {
			w = englishDigits(g)
		}
		if i == 0 && plus {
			if lang == "fr" {
				w = "plus " + frenchCardinal(atoi(g))
			} else {
				w = "plus " + w
			}
		}
		parts = append(parts, w)
	}
	return strings.Join(parts, ", "), true
}

// phoneGroups splits an unseparated number: +33 6 12 34 56 78, +1 415 555
// 0100, a French 06 12 34 56 78; others by threes.
func phoneGroups(d string, plus bool) []string {
	d = strings.TrimPrefix(d, "+")
	var out []string
	switch {
	case plus && strings.HasPrefix(d, "33") && len(d) == 11:
		out = append(out, "33", d[2:3])
		d = d[3:]
		for len(d) >= 2 {
			out, d = append(out, d[:2]), d[2:]
		}
		return out
	case plus && strings.HasPrefix(d, "1") && len(d) == 11:
		return []string{"1", d[1:4], d[4:7], d[7:]}
	case !plus && len(d) == 10 && d[0] == '0':
		for len(d) >= 2 {
			out, d = append(out, d[:2]), d[2:]
		}
		return out
	}
	for len(d) > 4 {
		out, d = append(out, d[:3]), d[3:]
	}
	return append(out, d)
}

var digitsEN = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}

func englishDigits(g string) string {
	var w []string
	for _, r := range g {
		if r >= '0' && r <= '9' {
			w = append(w, digitsEN[r-'0'])
		}
	}
	return strings.Join(w, " ")
}

// frenchDigitGroup reads a group as the French say phone numbers: a pair
// as a number (zéro six for 06), other lengths digit by digit.
func frenchDigitGroup(g string) string {
	if len(g) == 2 {
		if g[0] == '0' {
			return "zéro " + frenchCardinal(int(g[1]-'0'))
		}
		return frenchCardinal(atoi(g))
	}
	var w []string
	for _, r := range g {
		if r >= '0' && r <= '9' {
			w = append(w, frenchCardinal(int(r-'0')))
		}
	}
	return strings.Join(w, " ")
}

func spokenOrdinal(lang string, m []string) (string, bool) {
	n, suffix := atoi(m[1]), m[2]
	if n > 999_999 {
		return "", false
	}
	switch {
	case lang == "en" && (suffix == "st" || suffix == "nd" || suffix == "rd" || suffix == "th"):
		return englishOrdinal(n), true
	case lang == "fr" && n == 1 && (suffix == "er" || suffix == "re"):
		if suffix == "re" {
			return "première", true
		}
		return "premier", true
	case lang == "fr" && n > 1 && (suffix == "e" || suffix == "ème" || suffix == "eme"):
		return frenchOrdinal(n), true
	}
	return "", false
}

func spokenStreet(lang string, m []string) (string, bool) {
	if lang != "en" {
		return "", false
	}
	full := map[string]string{"St": "Street", "Ave": "Avenue", "Rd": "Road", "Blvd": "Boulevard", "Ln": "Lane", "Sq": "Square"}
	return m[1] + full[m[2]], true
}

func spokenRue(lang string, m []string) (string, bool) {
	if lang != "fr" {
		return "", false
	}
	full := map[string]string{"bd": "boulevard", "boul": "boulevard", "av": "avenue", "pl": "place"}
	return full[strings.ToLower(m[1])] + " " + m[2], true
}

// spokenNumber reads what digits are left: a bare five-digit number is a
// postcode (digit by digit in English; in French the département, then
// the digits); a bare English four-digit number from 1100 to 2099 a year;
// anything else a cardinal, with its decimals.
func spokenNumber(lang string, m []string) (string, bool) {
	s := m[0]
	bare := !strings.ContainsAny(s, ",. \u00a0\u202f")
	switch {
	case bare && len(s) == 5:
		if lang == "fr" {
			return frenchDigitGroup(s[:2]) + " " + frenchDigitGroup(s[2:]), true
		}
		return englishDigits(s), true
	case bare && lang == "en" && len(s) == 4 && s >= "1100" && s <= "2099":
		return englishYear(atoi(s)), true
	case bare && len(s) > 9:
		if lang == "fr" {
			return frenchDigitGroup(s), true
		}
		return englishDigits(s), true
	}
	// Thousands separators out; the decimal mark is the last separator
	// followed by fewer than three digits.
	grouped := spokenGrouped.FindString(s)
	if grouped != "" {
		rest := s[len(grouped):]
		s = strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, grouped) + rest
	}
	return spokenDecimal(lang, s)
}

var (
	onesEN = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
		"eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"}
	tensEN = []string{"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}
)

func englishCardinal(n int) string {
	switch {
	case n < 0:
		return "minus " + englishCardinal(-n)
	case n < 20:
		return onesEN[n]
	case n < 100:
		if n%10 == 0 {
			return tensEN[n/10]
		}
		return tensEN[n/10] + "-" + onesEN[n%10]
	case n < 1000:
		s := onesEN[n/100] + " hundred"
		if n%100 != 0 {
			s += " " + englishCardinal(n%100)
		}
		return s
	}
	for _, sc := range []struct {
		v    int
		name string
	}{{1_000_000_000, "billion"}, {1_000_000, "million"}, {1000, "thousand"}} {
		if n >= sc.v {
			s := englishCardinal(n/sc.v) + " " + sc.name
			if n%sc.v != 0 {
				s += " " + englishCardinal(n%sc.v)
			}
			return s
		}
	}
	return strconv.Itoa(n)
}

// englishYear reads 2026 as twenty twenty-six, 2005 as two thousand five,
// 1999 as nineteen ninety-nine.
func englishYear(y int) string {
	switch {
	case y >= 2000 && y < 2010, y%1000 == 0, y < 1100 || y > 9999:
		return englishCardinal(y)
	case y%100 == 0:
		return englishCardinal(y/100) + " hundred"
	case y%100 < 10:
		return englishCardinal(y/100) + " oh " + englishCardinal(y%100)
	}
	return englishCardinal(y/100) + " " + englishCardinal(y%100)
}

func englishOrdinal(n int) string {
	s := englishCardinal(n)
	irregular := map[string]string{"one": "first", "two": "second", "three": "third", "five": "fifth",
		"eight": "eighth", "nine": "ninth", "twelve": "twelfth"}
	// The last word takes the ordinal form.
	i := strings.LastIndexAny(s, " -") + 1
	last := s[i:]
	switch {
	case irregular[last] != "":
		last = irregular[last]
	case strings.HasSuffix(last, "y"):
		last = strings.TrimSuffix(last, "y") + "ieth"
	default:
		last += "th"
	}
	return s[:i] + last
}

var (
	onesFR = []string{"zéro", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf", "dix",
		"onze", "douze", "treize", "quatorze", "quinze", "seize", "dix-sept", "dix-huit", "dix-neuf"}
	tensFR = []string{"", "", "vingt", "trente", "quarante", "cinquante", "soixante"}
)

// frenchCardinal writes n in French words (traditional spelling: hyphens
// below a hundred, "et un", quatre-vingts and deux cents plural at the end).
func frenchCardinal(n int) string {
	switch {
	case n < 0:
		return "moins " + frenchCardinal(-n)
	case n < 20:
		return onesFR[n]
	case n < 70:
		t, u := n/10, n%10
		switch u {
		case 0:
			return tensFR[t]
		case 1:
			return tensFR[t] + " et un"
		}
		return tensFR[t] + "-" + onesFR[u]
	case n < 80:
		if n == 71 {
			return "soixante et onze"
		}
		return "soixante-" + onesFR[n-60]
	case n < 100:
		if n == 80 {
			return "quatre-vingts"
		}
		return "quatre-vingt-" + onesFR[n-80]
	case n < 1000:
		h, r := n/100, n%100
		s := "cent"
		if h > 1 {
			s = onesFR[h] + " cent"
			if r == 0 {
				s += "s"
			}
		}
		if r != 0 {
			s += " " + frenchCardinal(r)
		}
		return s
	case n < 1_000_000:
		th, r := n/1000, n%1000
		s := "mille"
		if th > 1 {
			s = strings.TrimSuffix(frenchCardinal(th), "s") + " mille" // deux cent mille, quatre-vingt mille
		}
		if r != 0 {
			s += " " + frenchCardinal(r)
		}
		return s
	case n < 1_000_000_000:
		mi, r := n/1_000_000, n%1_000_000
		s := frenchCardinal(mi) + " million"
		if mi > 1 {
			s += "s"
		}
		if r != 0 {
			s += " " + frenchCardinal(r)
		}
		return s
	}
	return strconv.Itoa(n)
}

// frenchOrdinal: deuxième, cinquième, neuvième, vingt et unième, quatre-vingtième.
func frenchOrdinal(n int) string {
	s := strings.TrimSuffix(frenchCardinal(n), "s")
	switch {
	case strings.HasSuffix(s, "cinq"):
		return s + "uième"
	case strings.HasSuffix(s, "neuf"):
		return strings.TrimSuffix(s, "f") + "vième"
	case strings.HasSuffix(s, "e"):
		return strings.TrimSuffix(s, "e") + "ième"
	}
	return s + "ième"
}
