package main

import (
	"go/ast"
	"go/parser"
	"go/token"
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
	"session/sim":       {"session/wsdeflate"},
	"session/responses": {"session/wsdeflate"},
	// permessage-deflate with context takeover under gorilla/websocket.
	"session/wsdeflate": {},
	"mcp":               {},
	"mcp/mcptest":       {}, // imported by tests only: a tiny MCP server
	"safesocket":        {},
	"workspace":         {"store", "workspace/patch", "workspace/watch", "workspace/sandbox", "workspace/cmdsafe"},
	"workspace/patch":   {},
	"workspace/watch":   {},
	"workspace/sandbox": {},
	// What a command line does, read without running it: read-only or covered by a rule.
	"workspace/cmdsafe": {},
	"session":           {"store", "session/responses", "session/transcript"},
	"daemon":            {"rpc", "safesocket", "workspace", "workspace/watch", "workspace/sandbox", "workspace/cmdsafe", "session", "session/responses", "store", "mcp"},
	"installer":         {},
	"cmd/hearth":        {"daemon", "rpc", "safesocket", "workspace", "workspace/sandbox", "session", "session/responses", "session/sim", "store", "installer", "mcp", "cmd/hearth/internal/bench"},
	// hearth bench: the request modes against the simulator.
	"cmd/hearth/internal/bench": {"session", "session/responses", "session/sim", "store", "workspace"},
	// The one owner of a conversation's transcript and its store writes.
	"session/transcript": {"store"},
	// Imported by tests only: isolates them from the user's environment.
	"internal/testenv": {},
	// Imported by tests only: the official Responses API request schema.
	"internal/apischema": {},
	// Imported by tests only: damages a database as a failing disk does.
	"store/storetest": {},
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
	got := importGraph(t)
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

// TestDaemonLinksNoSimulator: the simulator is the CLI's to run (in
// simulator mode it hands the daemon its URL); nothing the daemon imports,
// directly or not, brings it into the daemon's build.
func TestDaemonLinksNoSimulator(t *testing.T) {
	got := importGraph(t)
	via := map[string]string{"daemon": ""} // package → the package that imports it on the way
	for queue := []string{"daemon"}; len(queue) > 0; queue = queue[1:] {
		for imp := range got[queue[0]] {
			if _, seen := via[imp]; !seen {
				via[imp] = queue[0]
				queue = append(queue, imp)
			}
		}
	}
	if _, linked := via["session/sim"]; linked {
		path := []string{"session/sim"}
		for p := via["session/sim"]; p != ""; p = via[p] {
			path = append([]string{p}, path...)
		}
		t.Fatalf("daemon links the simulator: %s", strings.Join(path, " → "))
	}
	if len(via) < 3 {
		t.Fatalf("the daemon's imports were not followed: %v", via)
	}
}

// importGraph maps each hearth package of the module to the hearth packages
// its non-test files import (every file, whatever its build tags).
func importGraph(t *testing.T) map[string]map[string]bool {
	t.Helper()
	got := map[string]map[string]bool{}
	walkSources(t, parser.ImportsOnly, func(pkg string, _ *token.FileSet, f *ast.File) {
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
	})
	if len(got["daemon"]) == 0 || len(got["cmd/hearth"]) == 0 {
		t.Fatalf("walked the wrong tree: no hearth imports found")
	}
	return got
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
