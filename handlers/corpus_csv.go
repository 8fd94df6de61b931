package handlers

// The knowledge base's CSV import, which POST /tenants/{slug}/corpus/import
// and the dashboard's import share.

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/knowledge"
	"github.com/parley/parley/manage"
)

// maxCSVBytes bounds a CSV import.
const maxCSVBytes = 5 << 20

// maxImportErrors bounds the rejected lines an import reports; the count of
// the others goes in errorsOmitted.
const maxImportErrors = 100

type importError struct {
	Line  int    `json:"line"`
	Error string `json:"error"`
}

// ImportReport is what an import did: imported counts the entries created or
// updated, skipped the good lines that would have changed nothing (an entry
// already as the line says), errors the lines refused and not written.
type ImportReport struct {
	Imported      int           `json:"imported"`
	Skipped       int           `json:"skipped"`
	Errors        []importError `json:"errors"`
	ErrorsOmitted int           `json:"errorsOmitted,omitempty"`
}

// ReadCSVUpload reads the multipart part `file` of a CSV import, within maxCSVBytes.
func ReadCSVUpload(c echo.Context) ([]byte, error) {
	req := c.Request()
	req.Body = http.MaxBytesReader(c.Response(), req.Body, maxCSVBytes+64<<10)
	fh, err := c.FormFile("file")
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, &parley.Error{Kind: parley.KindTooLarge, Message: fmt.Sprintf("CSV file too large: at most %d MiB; split it into several imports", maxCSVBytes>>20)}
	case err != nil:
		return nil, &parley.Error{Kind: parley.KindInvalid, Message: "Send the CSV as a multipart/form-data part named \"file\"",
			Details: map[string]string{"file": "is required"}}
	case fh.Size > maxCSVBytes:
		return nil, &parley.Error{Kind: parley.KindTooLarge, Message: fmt.Sprintf("CSV file too large: at most %d MiB; split it into several imports", maxCSVBytes>>20)}
	}
	f, err := fh.Open()
	if err != nil {
		return nil, fmt.Errorf("opening upload: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("reading upload: %w", err)
	}
	return data, nil
}

// unreadableCSV is the 400 of a file that cannot be split into rows.
func unreadableCSV(line int, why string) error {
	msg := fmt.Sprintf("line %d: %s", line, why)
	return &parley.Error{Kind: parley.KindInvalid, Message: "The CSV file cannot be read at " + msg + "; nothing was imported",
		Details: map[string]string{"file": msg}}
}

// checkCSVText refuses a file that is not UTF-8 text: NUL bytes or invalid
// UTF-8, naming the first line that has one.
func checkCSVText(data []byte) error {
	if utf8.Valid(data) && bytes.IndexByte(data, 0) < 0 {
		return nil
	}
	for i := 0; i < len(data); {
		why := ""
		if data[i] == 0 {
			why = "it holds a NUL byte; save the file as UTF-8 text"
		} else if r, size := utf8.DecodeRune(data[i:]); r == utf8.RuneError && size == 1 {
			why = "it is not valid UTF-8; save the file as UTF-8"
		} else {
			i += size
			continue
		}
		return unreadableCSV(bytes.Count(data[:i], []byte("\n"))+1, why)
	}
	return nil
}

// csvColumn is a header name as the import matches it: case, spaces,
// underscores and hyphens ignored (externalId, external_id).
func csvColumn(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r == ' ' {
			return -1
		}
		return r
	}, strings.ToLower(strings.TrimSpace(name)))
}

// parseErrorOf describes a csv.ParseError by line.
func parseErrorOf(err error) error {
	var perr *csv.ParseError
	if !errors.As(err, &perr) {
		return unreadableCSV(1, err.Error())
	}
	if errors.Is(perr.Err, csv.ErrQuote) && perr.StartLine != perr.Line {
		return unreadableCSV(perr.StartLine, "a quoted field starting on this line is not closed")
	}
	return unreadableCSV(perr.Line, perr.Err.Error())
}

// ImportCorpusCSV imports the rows of a CSV file into t's corpus. A file that
// cannot be read at all is an error (400), and so is the plan's limit (429):
// then nothing is written. Rows that break the entry rules are reported by
// line and left out; the others are written in one transaction, so a failure
// of the database writes none of them. A row without externalId that repeats
// the title and content of an earlier row, or of an entry the tenant has, is
// skipped: importing a file twice must not double the knowledge base.
func (h *Base) ImportCorpusCSV(ctx context.Context, t parley.Tenant, data []byte) (ImportReport, error) {
	rep := ImportReport{Errors: []importError{}}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if err := checkCSVText(data); err != nil {
		return rep, err
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	header, err := r.Read()
	if err == io.EOF {
		return rep, Invalid("The CSV file is empty: the first line must be the header title,content,segment,priority")
	}
	if err != nil {
		return rep, parseErrorOf(err)
	}
	col := map[string]int{}
	for i, name := range header {
		if _, dup := col[csvColumn(name)]; !dup {
			col[csvColumn(name)] = i
		}
	}
	if _, ok := col["title"]; !ok {
		return rep, Invalid("The CSV header must name the columns title and content (and optionally segment, priority, externalId); got %q", strings.Join(header, ","))
	}
	if _, ok := col["content"]; !ok {
		return rep, Invalid("The CSV header must name the columns title and content (and optionally segment, priority, externalId); got %q", strings.Join(header, ","))
	}
	segment, err := h.Manage.SegmentTable(ctx, t.ID)
	if err != nil {
		return rep, err
	}
	_, hasSegment := col["segment"]
	_, hasPriority := col["priority"]
	imp := knowledge.CorpusImport{Source: "csv", HasSegment: hasSegment, HasPriority: hasPriority}
	lineOf := map[string]int{} // externalId -> its line
	// seen holds the title and content of every good row so far; a row
	// without externalId that repeats one would add a copy of an entry the
	// import is creating. The strings are the rows' own, not copies.
	type titleContent struct{ title, content string }
	seen := map[titleContent]bool{}
	fail := func(line int, why string) {
		if len(rep.Errors) < maxImportErrors {
			rep.Errors = append(rep.Errors, importError{Line: line, Error: why})
		} else {
			rep.ErrorsOmitted++
		}
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return rep, parseErrorOf(err)
		}
		line, _ := r.FieldPos(0) // a record read without error has a field
		get := func(name string) string {
			if i, ok := col[name]; ok && i < len(rec) {
				return rec[i]
			}
			return ""
		}
		// A bad segment is named by the file's column.
		in := parley.CorpusInput{Title: parley.Some(get("title")), Content: parley.Some(get("content")),
			SegmentField: "segment", Problems: parley.FieldErrors{}}
		if s := strings.TrimSpace(get("segment")); s != "" {
			in.Segment = parley.Some(s)
		}
		if p := strings.TrimSpace(get("priority")); p != "" {
			if n, err := strconv.Atoi(p); err != nil {
				in.Problems.Add("priority", "must be an integer between 0 and 100")
			} else {
				in.Priority = parley.Some(n)
			}
		}
		if id := strings.TrimSpace(get("externalid")); id != "" {
			in.ExternalID = parley.Some(id)
			if first, dup := lineOf[id]; dup {
				in.Problems.Add("externalId", fmt.Sprintf("%q is already on line %d", id, first))
			} else {
				lineOf[id] = line
			}
		}
		w, fe := manage.CheckCorpus(in, true, segment)
		if len(fe) > 0 {
			fail(line, fe.Sentence())
			continue
		}
		key := titleContent{w.Title.Value, w.Content.Value}
		if seen[key] && w.ExternalID.Ptr() == nil {
			rep.Skipped++
			continue
		}
		seen[key] = true
		row := knowledge.CorpusImportRow{Title: w.Title.Value, Content: w.Content.Value, SegmentID: w.SegmentID.Ptr(),
			Priority: knowledge.DefaultCorpusPriority, ExternalID: w.ExternalID.Ptr()}
		if w.Priority.Set {
			row.Priority = w.Priority.Value
		}
		imp.Rows = append(imp.Rows, row)
	}
	if len(imp.Rows) == 0 {
		return rep, nil
	}
	res, err := h.Manage.ImportCorpus(ctx, t, imp)
	if err != nil {
		return ImportReport{Errors: []importError{}}, err
	}
	rep.Imported = res.Created + res.Updated
	rep.Skipped += res.Unchanged + res.Duplicates
	return rep, nil
}
