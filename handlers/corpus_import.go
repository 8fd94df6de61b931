package handlers

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

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
)

// maxCSVBytes bounds a CSV import.
const maxCSVBytes = 5 << 20

type importError struct {
	Line  int    `json:"line"`
	Error string `json:"error"`
}

// ImportCorpus answers POST /tenants/{slug}/corpus/import: a multipart part
// `file` holding CSV with the header title,content,segment,priority (columns
// in any order; segment and priority optional). Each valid row becomes an
// entry in its own transaction; each bad row is reported with its line.
func (h *Handler) ImportCorpus(c echo.Context) error {
	data, err := readCSVUpload(c)
	if err != nil {
		return err
	}
	imported, errs, err := h.importCorpusCSV(c.Request().Context(), tenantFrom(c), data)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"imported": imported, "errors": errs})
}

// readCSVUpload reads the multipart part `file` of a CSV import, within maxCSVBytes.
func readCSVUpload(c echo.Context) ([]byte, error) {
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

// importCorpusCSV imports the rows of a CSV file into t's corpus: it returns
// how many were imported and the errors of the rejected lines; an error is a
// file that cannot be imported at all.
func (h *Handler) importCorpusCSV(ctx context.Context, t parley.Tenant, data []byte) (int, []importError, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return 0, nil, invalid("The CSV file is empty or unreadable: the first line must be the header title,content,segment,priority")
	}
	col := map[string]int{}
	for i, name := range header {
		col[strings.ToLower(strings.TrimSpace(name))] = i
	}
	if _, ok := col["title"]; !ok {
		return 0, nil, invalid("The CSV header must name the columns title and content (and optionally segment, priority); got %q", strings.Join(header, ","))
	}
	if _, ok := col["content"]; !ok {
		return 0, nil, invalid("The CSV header must name the columns title and content (and optionally segment, priority); got %q", strings.Join(header, ","))
	}
	imported := 0
	errs := []importError{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		line, _ := r.FieldPos(0)
		var perr *csv.ParseError
		if errors.As(err, &perr) {
			errs = append(errs, importError{Line: perr.StartLine, Error: perr.Err.Error()})
			if perr.Err == csv.ErrQuote || perr.Err == csv.ErrBareQuote {
				break // the rest of the file cannot be split into rows reliably
			}
			continue
		}
		get := func(name string) (string, bool) {
			i, ok := col[name]
			if !ok || i >= len(rec) {
				return "", false
			}
			return rec[i], true
		}
		var b corpusBody
		title, _ := get("title")
		content, _ := get("content")
		b.Title, b.Content = parley.Some(title), parley.Some(content)
		if s, ok := get("segment"); ok && strings.TrimSpace(s) != "" {
			b.SegmentSlug = parley.Some(strings.TrimSpace(s))
		}
		fe := parley.FieldErrors{}
		if p, ok := get("priority"); ok && strings.TrimSpace(p) != "" {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil {
				fe.Add("priority", "must be an integer between 0 and 100")
			} else {
				b.Priority = parley.Some(n)
			}
		}
		w, verrs := h.validateCorpus(ctx, t.ID, b, true)
		for k, v := range verrs {
			if k == "segmentSlug" {
				k = "segment" // the file's column
			}
			fe.Add(k, v)
		}
		if len(fe) > 0 {
			errs = append(errs, importError{Line: line, Error: reason(fe)})
			continue
		}
		w.Source = parley.Some("csv")
		if _, _, err := h.DB.UpsertCorpus(ctx, t.ID, t.PlanInfo().CorpusLimit, w); err != nil {
			if parley.ErrorKind(err) == parley.KindInternal {
				return 0, nil, err
			}
			errs = append(errs, importError{Line: line, Error: err.Error()})
			continue
		}
		imported++
	}
	return imported, errs, nil
}
