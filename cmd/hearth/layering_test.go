package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/hearthd/hearth"

// allowed is the import graph of docs/ARCHITECTURE.md: each package may
// import only the hearth packages listed (non-test files).
var allowed = map[string][]string{
	"store":             {},
	"rpc":               {},
	"session/sim":       {},
	"session/responses": {},
	"mcp":               {},
	"mcp/mcptest":       {}, // imported by tests only: a tiny MCP server
	"workspace":         {"store"},
	"session":           {"store", "session/responses"},
	"daemon":            {"rpc", "workspace", "session", "session/responses", "session/sim", "store", "mcp"},
	"installer":         {"daemon", "rpc"},
	"cmd/hearth":        {"daemon", "rpc", "workspace", "session", "session/responses", "session/sim", "store", "installer", "mcp"},
	// Imported by tests only: isolates them from the user's environment.
	"internal/testenv": {},
}

// wire is the one package (the simulator aside) that speaks the Responses
// API's WebSocket: the agent loop in session knows requests and responses
// through session/responses, never the socket.
var wire = map[string][]string{
	"github.com/gorilla/websocket": {"session/responses", "session/sim"},
}

// TestLayering fails when a package imports a hearth package it may not:
// imports flow downward only.
func TestLayering(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]bool{}
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
		pkg := filepath.ToSlash(rel)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if ok, known := wire[p]; known && !contains(ok, pkg) {
				t.Errorf("%s imports %s: only %s may", pkg, p, strings.Join(ok, ", "))
			}
			if p == module || strings.HasPrefix(p, module+"/") {
				if got[pkg] == nil {
					got[pkg] = map[string]bool{}
				}
				got[pkg][strings.TrimPrefix(p, module+"/")] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got["daemon"]) == 0 || len(got["cmd/hearth"]) == 0 {
		t.Fatalf("walked the wrong tree: no hearth imports found under %s", root)
	}
	for pkg, imps := range got {
		ok, known := allowed[pkg]
		if !known {
			t.Errorf("package %s is not in the layering table; add it to docs/ARCHITECTURE.md and this test", pkg)
			continue
		}
		for imp := range imps {
			if !contains(ok, imp) {
				t.Errorf("%s imports %s: forbidden (allowed: %s)", pkg, imp, strings.Join(ok, ", "))
			}
		}
	}
	if t.Failed() {
		var keys []string
		for k := range got {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t.Logf("packages seen: %v", keys)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
