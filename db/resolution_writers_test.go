package db_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMessageWritersKeepResolution: every statement of the stores that
// inserts into messages keeps the resolution's marks of its conversation
// (migration 00058: answered, person_replied, repeated_question) itself,
// since migration 00060 dropped the trigger that did: the declaration that
// holds it (a const, a var or a function) names one of the marks, or is one
// of the few listed below with the reason it needs none. A new writer of
// messages fails here until it keeps them.
func TestMessageWritersKeepResolution(t *testing.T) {
	none := map[string]string{
		// The first message of a conversation it starts: a visitor's
		// message, nothing before it to repeat, no answer yet.
		"startConversationSQL": "a new conversation's first message",
	}
	marks := []string{"answered", "person_replied", "repeated_question"}
	fset := token.NewFileSet()
	found := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			name, node := "", ast.Node(decl)
			switch d := decl.(type) {
			case *ast.FuncDecl:
				name = d.Name.Name
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					if vs, ok := spec.(*ast.ValueSpec); ok {
						text := string(src[fset.Position(vs.Pos()).Offset:fset.Position(vs.End()).Offset])
						if strings.Contains(text, "INSERT INTO messages") {
							check(t, path, vs.Names[0].Name, text, marks, none, found)
						}
					}
				}
				continue
			}
			text := string(src[fset.Position(node.Pos()).Offset:fset.Position(node.End()).Offset])
			if strings.Contains(text, "INSERT INTO messages") {
				check(t, path, name, text, marks, none, found)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) < 4 {
		t.Errorf("found %d writers of messages, want the store's four or more: %v", len(found), found)
	}
	for name := range none {
		if !found[name] {
			t.Errorf("%s is listed as needing no marks but writes no messages any more: take it off the list", name)
		}
	}
}

func check(t *testing.T, path, name, text string, marks []string, none map[string]string, found map[string]bool) {
	t.Helper()
	found[name] = true
	if _, ok := none[name]; ok {
		return
	}
	for _, m := range marks {
		if strings.Contains(text, m) {
			return
		}
	}
	t.Errorf("%s (%s) inserts into messages but keeps none of the resolution's marks (%s)", name, path, strings.Join(marks, ", "))
}
