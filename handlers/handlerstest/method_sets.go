package handlerstest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// MaxMethods is the most exported methods a handler type's method set may
// hold, the promoted ones (Base's) included: past it a handler is split into
// areas.
const MaxMethods = 40

// CheckMethodSets fails t when one of handlers (pointers to the package's
// handler types) has more than max exported methods in its method set, or
// when the package in the test's directory declares an exported type with
// methods, or one embedding another, that handlers does not list: a new
// handler type is measured too.
func CheckMethodSets(t *testing.T, max int, handlers ...any) {
	t.Helper()
	listed := map[string]bool{}
	for _, h := range handlers {
		typ := reflect.TypeOf(h)
		if typ.Kind() != reflect.Pointer {
			t.Fatalf("%v: want a pointer to the handler type", typ)
		}
		name := typ.Elem().Name()
		listed[name] = true
		if n := typ.NumMethod(); n > max {
			t.Errorf("%s has %d exported methods (its own and promoted), more than %d: split it into areas", name, n, max)
		} else {
			t.Logf("%s: %d exported methods", name, n)
		}
	}
	for _, name := range handlerTypes(t) {
		if !listed[name] {
			t.Errorf("%s has methods or embeds a type but is not measured: list it in the test", name)
		}
	}
}

// handlerTypes is the exported types of the package in the working
// directory (its files other than tests) that have exported methods or
// embed another type, sorted.
func handlerTypes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	found := map[string]bool{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil || len(d.Recv.List) == 0 || !d.Name.IsExported() {
					continue
				}
				if name := receiverName(d.Recv.List[0].Type); ast.IsExported(name) {
					found[name] = true
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok || !ts.Name.IsExported() {
						continue
					}
					if st, ok := ts.Type.(*ast.StructType); ok && embeds(st) {
						found[ts.Name.Name] = true
					}
				}
			}
		}
	}
	var names []string
	for name := range found {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// receiverName is the type name of a method's receiver, pointer or not.
func receiverName(e ast.Expr) string {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// embeds reports whether a struct has an embedded field, whose methods it
// gets.
func embeds(st *ast.StructType) bool {
	for _, f := range st.Fields.List {
		if len(f.Names) == 0 {
			return true
		}
	}
	return false
}
