// Package jsonbody reads a request's JSON body for every surface: an object
// of raw fields under a size bound, its fields decoded into a struct with a
// problem per field, text PostgreSQL can store (valid UTF-8, no NUL), and
// the 415 of a body that is not JSON.
package jsonbody

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
)

// MaxJSONBody bounds management request bodies (bulk corpus imports are larger and set their own).
const MaxJSONBody = 1 << 20

// RequireJSON refuses, with 415, a body that is not sent as JSON to an
// endpoint that reads JSON. A request without a body passes: the endpoint
// then says what is missing.
func RequireJSON(req *http.Request) error {
	if req.ContentLength != 0 && !isJSONType(req.Header.Get(echo.HeaderContentType)) {
		msg := "Content-Type must be application/json"
		if ct := req.Header.Get(echo.HeaderContentType); ct != "" {
			msg = fmt.Sprintf("Content-Type %q is not JSON: send the body as application/json", ct)
		}
		return echo.NewHTTPError(http.StatusUnsupportedMediaType, msg)
	}
	return nil
}

// isJSONType reports whether a Content-Type names JSON: application/json or
// a +json type, with any parameters (charset=utf-8).
func isJSONType(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == echo.MIMEApplicationJSON || strings.HasSuffix(mt, "+json"))
}

// DecodeObject reads a JSON object body into a map of raw fields.
func DecodeObject(c echo.Context, limit int64) (map[string]json.RawMessage, error) {
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, limit+1))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return nil, parley.Errorf(parley.KindInvalid, "The request body did not arrive in time")
	}
	if err != nil {
		return nil, parley.Errorf(parley.KindInvalid, "Could not read request body")
	}
	if int64(len(body)) > limit {
		return nil, &parley.Error{Kind: parley.KindTooLarge, Message: "Request body too large"}
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return nil, parley.Errorf(parley.KindInvalid, "Request body must be a JSON object")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, parley.Errorf(parley.KindInvalid, "Malformed JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if !utf8.Valid(body) || hasLoneSurrogate(body) {
		return nil, invalidUTF8(raw)
	}
	return raw, nil
}

// invalidUTF8 is the 400 of a JSON body that is not UTF-8, or escapes a
// lone surrogate (\ud800 with no low half after it, or a \udc00 alone:
// no character, so no UTF-8 either), which encoding/json would silently
// turn into U+FFFD: it names the fields whose values hold the bad bytes or
// escapes (a raw value keeps them as sent), or the body when they are in a
// name.
func invalidUTF8(raw map[string]json.RawMessage) error {
	errs := parley.FieldErrors{}
	for name, msg := range raw {
		if (!utf8.Valid(msg) || hasLoneSurrogate(msg)) && utf8.ValidString(name) {
			errs.Add(name, "must be valid UTF-8 text")
		}
	}
	if len(errs) == 0 {
		return parley.Errorf(parley.KindInvalid, "Request body must be valid UTF-8")
	}
	return errs.Err()
}

// DecodeFields unmarshals each field of raw into the struct field of dst
// (a pointer to a struct) whose json tag names it, collecting one error per
// field of the wrong type. Fields dst does not declare are ignored, so a
// client may send back what it read.
func DecodeFields(raw map[string]json.RawMessage, dst any) parley.FieldErrors {
	errs := parley.FieldErrors{}
	v := reflect.ValueOf(dst).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		msg, ok := raw[name]
		if !ok {
			continue
		}
		if HasNUL(msg) {
			errs.Add(name, "must not contain NUL characters")
			continue
		}
		if err := json.Unmarshal(msg, v.Field(i).Addr().Interface()); err != nil {
			errs.Add(name, typeError(err))
		}
	}
	return errs
}

// typeError turns a JSON unmarshalling error into a message about the expected type.
func typeError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return te.Field + " must be " + describeType(te.Type)
		}
		return "must be " + describeType(te.Type)
	}
	return "has an invalid value"
}

func describeType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(describeType(t.Elem()), "a "), "an ") + "s"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "of another type"
}

// hasLoneSurrogate reports whether a JSON text escapes half a UTF-16
// surrogate pair inside a string: a high half (\ud800-\udbff) not followed
// by an escaped low half (\udc00-\udfff), or a low half on its own. It
// reads escapes only within strings, so a literal backslash (\\ud800) is
// not one.
func hasLoneSurrogate(raw []byte) bool {
	if !bytes.Contains(raw, []byte(`\u`)) {
		return false // the common case: no \u escape at all
	}
	// surrogate is the value of the \uXXXX escape at raw[i] (a backslash),
	// when it is one of a surrogate.
	surrogate := func(i int) (rune, bool) {
		if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
			return 0, false
		}
		var r rune
		for _, c := range raw[i+2 : i+6] {
			switch {
			case c >= '0' && c <= '9':
				r = r<<4 | rune(c-'0')
			case c >= 'a' && c <= 'f':
				r = r<<4 | rune(c-'a'+10)
			case c >= 'A' && c <= 'F':
				r = r<<4 | rune(c-'A'+10)
			default:
				return 0, false
			}
		}
		return r, r >= 0xd800 && r <= 0xdfff
	}
	inString := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			inString = !inString
		case c == '\\' && inString:
			r, ok := surrogate(i)
			if !ok {
				i++ // the escaped character, a quote or backslash among them
				continue
			}
			if r >= 0xdc00 {
				return true // a low half with no high half before it
			}
			low, ok := surrogate(i + 6)
			if !ok || low < 0xdc00 {
				return true
			}
			i += 11 // both escapes
		}
	}
	return false
}

// HasNUL reports whether a JSON value holds a NUL character, which Postgres
// text cannot store. A literal backslash before "u0000" is not one.
func HasNUL(raw json.RawMessage) bool {
	for i := bytes.Index(raw, []byte(`\u0000`)); i >= 0; {
		backslashes := 0
		for j := i - 1; j >= 0 && raw[j] == '\\'; j-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return true
		}
		next := bytes.Index(raw[i+1:], []byte(`\u0000`))
		if next < 0 {
			return false
		}
		i += 1 + next
	}
	return false
}
