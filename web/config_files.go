package web

import (
	"crypto/subtle"
	"fmt"
	"slices"
	"strings"

	"github.com/parley/parley/auth"
)

// FileVars are the variables holding secrets that may instead be read from
// a file, named by the variable with _FILE appended (PARLEY_SECRET_KEY_FILE
// and so on), as container platforms and systemd's credentials hand
// secrets over: the file is read once at start, its trailing newlines
// trimmed.
var FileVars = []string{
	"DATABASE_URL", "PARLEY_SECRET_KEY", "PARLEY_SECRET_KEY_PREVIOUS", "PARLEY_LLM_API_KEY",
	"PARLEY_ADMIN_CAPTCHA_SECRET_KEY", "PARLEY_OPERATOR_TOKEN", "PARLEY_OPERATOR_TOKEN_SHA256",
	"PARLEY_SMTP_URL", "PARLEY_VAPI_API_KEY", "PARLEY_EMBEDDINGS_API_KEY",
	"PARLEY_METRICS_TOKEN", "PARLEY_METRICS_TOKEN_SHA256",
}

// fileVar reports whether name is the _FILE variant of one of FileVars.
func fileVar(name string) bool {
	v, ok := strings.CutSuffix(name, "_FILE")
	return ok && slices.Contains(FileVars, v)
}

// ResolveFiles returns getenv with the variables of FileVars read from
// their files where NAME_FILE is set (through readFile, os.ReadFile in
// production). Setting both NAME and NAME_FILE is an error, as are a file
// that cannot be read and an empty one; errors name the variable and the
// file, never what it holds.
func ResolveFiles(getenv func(string) string, readFile func(string) ([]byte, error)) (func(string) string, error) {
	fromFiles := map[string]string{}
	for _, name := range FileVars {
		v, fromFile, err := LookupFile(getenv, readFile, name)
		if err != nil {
			return nil, err
		}
		if fromFile {
			fromFiles[name] = v
		}
	}
	if len(fromFiles) == 0 {
		return getenv, nil
	}
	return func(name string) string {
		if v, ok := fromFiles[name]; ok {
			return v
		}
		return getenv(name)
	}, nil
}

// LookupFile reads one variable of FileVars the way ResolveFiles does: from
// NAME_FILE's file when that is set (fromFile true), else NAME itself.
// The one-off commands read only what they need through it, so that a
// service's other secret files need not be readable to them.
func LookupFile(getenv func(string) string, readFile func(string) ([]byte, error), name string) (v string, fromFile bool, err error) {
	path := strings.TrimSpace(getenv(name + "_FILE"))
	if path == "" || !slices.Contains(FileVars, name) {
		return getenv(name), false, nil
	}
	if getenv(name) != "" {
		return "", false, fmt.Errorf("%s_FILE: set it or %s, not both", name, name)
	}
	b, err := readFile(path)
	if err != nil {
		return "", false, fmt.Errorf("%s_FILE: cannot read %s: %v", name, path, unwrapPathError(err))
	}
	v = strings.TrimRight(string(b), "\r\n")
	if strings.TrimSpace(v) == "" {
		return "", false, fmt.Errorf("%s_FILE: %s is empty", name, path)
	}
	return v, true, nil
}

// unwrapPathError drops the path an *fs.PathError repeats.
func unwrapPathError(err error) error {
	if u, ok := err.(interface{ Unwrap() error }); ok && u.Unwrap() != nil {
		return u.Unwrap()
	}
	return err
}

// loadPreviousKey reads PARLEY_SECRET_KEY_PREVIOUS, the key the secrets
// were sealed with before a rotation (`parley secret rotate`): it needs
// PARLEY_SECRET_KEY and must differ from it.
func (c *Config) loadPreviousKey(getenv func(string) string) error {
	s := strings.TrimSpace(getenv("PARLEY_SECRET_KEY_PREVIOUS"))
	if s == "" {
		return nil
	}
	if len(c.SecretKey) == 0 {
		return fmt.Errorf("PARLEY_SECRET_KEY_PREVIOUS: set without PARLEY_SECRET_KEY (during a rotation, the new key is PARLEY_SECRET_KEY and the old one PARLEY_SECRET_KEY_PREVIOUS)")
	}
	key, err := auth.ParseKey(s)
	if err != nil {
		return fmt.Errorf("PARLEY_SECRET_KEY_PREVIOUS: %v", err)
	}
	if subtle.ConstantTimeCompare(key, c.SecretKey) == 1 {
		return fmt.Errorf("PARLEY_SECRET_KEY_PREVIOUS: the same key as PARLEY_SECRET_KEY (the previous key is the one being replaced)")
	}
	c.SecretKeyPrevious = key
	return nil
}
