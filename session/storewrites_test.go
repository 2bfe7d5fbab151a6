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
// method is a method of *store.DB, or of a type a *store.DB hands out
// (db.Items(), db.Requests(), ...), that opens a write transaction; session
// may call one only on its transcript (c.tr), and holds a *store.DB only
// to hand it to transcript.Open.
func TestStoreWritesGoThroughTheTranscript(t *testing.T) {
	writes, handles := storeWriteMethods(t)
	if len(writes) < 20 || len(handles) < 4 {
		t.Fatalf("found %d store write methods on %d types reached from *DB; the scan of store is broken", len(writes), len(handles))
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
			if field, ok := n.(*ast.Field); ok && handles[strings.TrimPrefix(exprString(field.Type), "store.")] &&
				strings.HasPrefix(exprString(field.Type), "store.") {
				t.Errorf("%s: a %s held outside the transcript: only the transcript writes to the store",
					fset.Position(field.Pos()), exprString(field.Type))
			}
			return true
		})
	}
}

// storeWriteMethods lists the write methods of store's *DB and of the
// types its accessors return (handles: a method of *DB without parameters
// returning one of store's types): those that call write, or another write
// method of their own type.
func storeWriteMethods(t *testing.T) (writes, handles map[string]bool) {
	files, err := filepath.Glob("../store/*.go")
	if err != nil {
		t.Fatal(err)
	}
	var methods []*ast.FuncDecl
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
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil && fn.Body != nil {
				methods = append(methods, fn)
			}
		}
	}
	handles = map[string]bool{"DB": true}
	for _, fn := range methods {
		res := fn.Type.Results
		if recvType(fn) == "DB" && len(fn.Type.Params.List) == 0 && res != nil && len(res.List) == 1 {
			if id, ok := res.List[0].Type.(*ast.Ident); ok && ast.IsExported(id.Name) {
				handles[id.Name] = true
			}
		}
	}
	// Type.Method of every write method, grown until no method is added:
	// a method that calls one of its type's write methods writes too.
	found := map[string]bool{}
	for grew := true; grew; {
		grew = false
		for _, fn := range methods {
			typ := recvType(fn)
			if !handles[typ] || found[typ+"."+fn.Name.Name] || !callsWrite(fn, typ, found) {
				continue
			}
			found[typ+"."+fn.Name.Name], grew = true, true
		}
	}
	writes = map[string]bool{}
	for m := range found {
		writes[m[strings.Index(m, ".")+1:]] = true
	}
	return writes, handles
}

// recvType is the name of fn's receiver type, without its star.
func recvType(fn *ast.FuncDecl) string {
	return strings.TrimPrefix(exprString(fn.Recv.List[0].Type), "*")
}

// callsWrite reports whether fn calls write, or a method of its type typ
// already found writing.
func callsWrite(fn *ast.FuncDecl, typ string, found map[string]bool) bool {
	calls := false
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "write" || found[typ+"."+sel.Sel.Name]) {
				calls = true
			}
		}
		return !calls
	})
	return calls
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
	case *ast.CallExpr:
		return exprString(e.Fun) + "()"
	}
	return "?"
}
