package session_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// The transcript has one owner: no non-test file of session writes to the
// store but through its Transcript (session/transcript). A store write
// method is a method of *store.DB that opens a write transaction; session
// may call one only on its transcript (c.tr), and holds a *store.DB only
// to hand it to transcript.Open.
func TestStoreWritesGoThroughTheTranscript(t *testing.T) {
	writes := storeWriteMethods(t)
	if len(writes) < 10 {
		t.Fatalf("found %d store write methods; the scan of store is broken", len(writes))
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !writes[sel.Sel.Name] || onTranscript(sel.X) {
				return true
			}
			t.Errorf("%s: %s called on %s: a store write outside the transcript (use the conversation's Transcript)",
				fset.Position(call.Pos()), sel.Sel.Name, exprString(sel.X))
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			if field, ok := n.(*ast.Field); ok && isStoreDB(field.Type) && !inOptions(f, field) {
				t.Errorf("%s: a *store.DB outside Options: only the transcript writes to the store", fset.Position(field.Pos()))
			}
			return true
		})
	}
}

// storeWriteMethods lists the methods of store's *DB that call db.write.
func storeWriteMethods(t *testing.T) map[string]bool {
	files, err := filepath.Glob("../store/*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Body == nil || exprString(fn.Recv.List[0].Type) != "*DB" {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "write" {
						out[fn.Name.Name] = true
					}
				}
				return true
			})
		}
	}
	return out
}

// onTranscript reports whether x is the conversation's transcript (c.tr,
// or a variable named tr) or one of its parts it hands out (c.tr.Turns()).
func onTranscript(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.SelectorExpr:
		return x.Sel.Name == "tr"
	case *ast.Ident:
		return x.Name == "tr"
	case *ast.CallExpr:
		sel, ok := x.Fun.(*ast.SelectorExpr)
		return ok && onTranscript(sel.X)
	}
	return false
}

func isStoreDB(e ast.Expr) bool { return exprString(e) == "*store.DB" }

// inOptions reports whether field is one of the Options struct's.
func inOptions(f *ast.File, field *ast.Field) bool {
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "Options" {
			return true
		}
		if st, ok := ts.Type.(*ast.StructType); ok {
			for _, fl := range st.Fields.List {
				found = found || fl == field
			}
		}
		return false
	})
	return found
}

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return "*" + exprString(e.X)
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	}
	return "?"
}
