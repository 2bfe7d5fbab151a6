package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The house's shape: a type small enough to hold in one's head, a function
// that fits on a screen. Tests are exempt; everything else counts, the
// simulator included.
const (
	maxMethods   = 30
	maxFuncLines = 80
)

// TestShape fails when a non-test type has more than maxMethods methods or a
// non-test function is longer than maxFuncLines lines.
func TestShape(t *testing.T) {
	methods := map[string]int{} // "pkg.Type" → declared methods
	var long []string
	walkSources(t, 0, func(pkg string, fset *token.FileSet, f *ast.File) {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > maxFuncLines {
				long = append(long, pkg+"."+funcName(fn)+" ("+strconv.Itoa(n)+" lines)")
			}
			if fn.Recv != nil && len(fn.Recv.List) == 1 {
				methods[pkg+"."+recvName(fn.Recv.List[0].Type)]++
			}
		}
	})
	if len(methods) < 20 {
		t.Fatalf("walked the wrong tree: %d types with methods", len(methods))
	}
	var big []string
	for typ, n := range methods {
		if n > maxMethods {
			big = append(big, typ+" ("+strconv.Itoa(n)+" methods)")
		}
	}
	sort.Strings(big)
	sort.Strings(long)
	for _, s := range big {
		t.Errorf("type %s: more than %d; give a coherent part of it a type of its own", s, maxMethods)
	}
	for _, s := range long {
		t.Errorf("function %s: more than %d", s, maxFuncLines)
	}
}

// walkSources parses every non-test Go file of the module (editors and
// testdata aside) with mode and hands it to fn with its package's path.
func walkSources(t *testing.T, mode parser.Mode, fn func(pkg string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "editors", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, mode)
		if err != nil {
			return err
		}
		fn(filepath.ToSlash(rel), fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv != nil && len(fn.Recv.List) == 1 {
		return recvName(fn.Recv.List[0].Type) + "." + fn.Name.Name
	}
	return fn.Name.Name
}
