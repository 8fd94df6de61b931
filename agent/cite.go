package agent

import (
	"slices"
	"strings"
)

// CiteInstruction asks the model to name the knowledge entries an answer
// rests on. Each entry of the prompt's knowledge sections carries its
// marker (ref="[3]"); the markers the answer writes are read out of it as
// it streams (citeFilter), so the visitor never sees them, and kept as the
// answer's sources.
const CiteInstruction = "Each entry has a marker such as [3]. Right after a sentence that uses an entry, write its marker, " +
	"like [3] or [1][3]; write none for a sentence that no entry supports, and never cite an entry you did not use.\n"

// citeMaxMarker bounds a marker's length, brackets included: "[12, 13, 14]"
// fits; anything longer is text.
const citeMaxMarker = 24

// citeFilter takes an answer's text as it streams, removes the citation
// markers of the refs it knows ([n], [n][m], [n, m]; each bracket judged on
// its own) with the spaces before them, and records the refs cited, in order of first citation. A bracket
// of other numbers ("[2024]"), a link's text or an unclosed bracket stays as
// written. Text that may be the start of a marker, and the spaces before it,
// are held back until the next write shows what they are, or flush.
type citeFilter struct {
	valid   func(ref int) bool
	pending string
	cited   []int
}

// newCiteFilter builds the filter of refs 1..n that valid accepts; nil
// when no entry can be cited, and then nothing is filtered.
func newCiteFilter(valid func(ref int) bool) *citeFilter {
	if valid == nil {
		return nil
	}
	return &citeFilter{valid: valid}
}

// write returns the part of s (after what was held back) that can be shown
// now.
func (f *citeFilter) write(s string) string {
	if f == nil {
		return s
	}
	buf := f.pending + s
	f.pending = ""
	var out strings.Builder
	for i := 0; i < len(buf); {
		c := buf[i]
		if c != '[' {
			// Spaces at the end of what arrived may be followed by a marker.
			if c == ' ' || c == '\t' {
				j := i
				for j < len(buf) && (buf[j] == ' ' || buf[j] == '\t') {
					j++
				}
				if j == len(buf) {
					f.pending = buf[i:]
					break
				}
				out.WriteString(buf[i:j])
				i = j
				continue
			}
			out.WriteByte(c)
			i++
			continue
		}
		refs, n, state := citeOne(buf[i:])
		switch {
		case state == markerPartial:
			// Hold the spaces before the bracket with it: a marker drops them.
			held := strings.TrimRight(out.String(), " \t")
			f.pending = out.String()[len(held):] + buf[i:]
			out.Reset()
			out.WriteString(held)
			return out.String()
		case state == markerWhole && f.allValid(refs):
			held := strings.TrimRight(out.String(), " \t")
			out.Reset()
			out.WriteString(held)
			for _, r := range refs {
				if !slices.Contains(f.cited, r) {
					f.cited = append(f.cited, r)
				}
			}
			i += n
		default:
			out.WriteByte(c)
			i++
		}
	}
	return out.String()
}

// flush returns what is held back, as text: the answer ended.
func (f *citeFilter) flush() string {
	if f == nil {
		return ""
	}
	s := f.pending
	f.pending = ""
	return s
}

// refs returns the refs cited so far.
func (f *citeFilter) refs() []int {
	if f == nil {
		return nil
	}
	return f.cited
}

func (f *citeFilter) allValid(refs []int) bool {
	for _, r := range refs {
		if !f.valid(r) {
			return false
		}
	}
	return len(refs) > 0
}

// The states of citeMarker's reading.
const (
	markerNone    = iota // not a marker
	markerPartial        // may become one: the text ends before the bracket closes
	markerWhole          // a marker of refs, n bytes long
)

// citeOne reads one bracket "[n]" or "[n, m, ...]" at the start of s.
func citeOne(s string) (refs []int, n int, state int) {
	num, digits := 0, 0
	for i := 1; i < len(s); i++ {
		if i >= citeMaxMarker {
			return nil, 0, markerNone
		}
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			if digits == 3 {
				return nil, 0, markerNone
			}
			num, digits = num*10+int(c-'0'), digits+1
		case c == ',' && digits > 0:
			refs, num, digits = append(refs, num), 0, 0
		case c == ' ' && (digits == 0 && i > 1 && s[i-1] == ','):
		case c == ']' && digits > 0:
			return append(refs, num), i + 1, markerWhole
		default:
			return nil, 0, markerNone
		}
	}
	return nil, 0, markerPartial
}
