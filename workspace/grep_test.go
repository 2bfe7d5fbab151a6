package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// grepTree builds a small workspace where "needle" appears in places grep
// must find and in places it must skip.
func grepTree(t *testing.T) (*Toolset, string) {
	t.Helper()
	r, root, outside := newTree(t)
	writeFile(t, filepath.Join(root, "README.md"), "# Title\nfind the needle here\n")
	writeFile(t, filepath.Join(root, "src", "main.go"), "package main\n\n// needle one\nfunc main() {}\n// Needle two\n")
	writeFile(t, filepath.Join(root, "src", "deep", "x.ts"), "const needle = 1;\r\n")
	writeFile(t, filepath.Join(root, ".git", "config"), "needle in git\n")
	writeFile(t, filepath.Join(root, "node_modules", "m", "index.js"), "needle in deps\n")
	writeFile(t, filepath.Join(root, "bin", "tool"), "needle\x00binary\n")
	symlink(t, outside, filepath.Join(root, "ext"))
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, "leak.txt"))
	symlink(t, "README.md", filepath.Join(root, "readme-link.md"))
	return NewToolset(r), root
}

func TestGrep(t *testing.T) {
	ts, _ := grepTree(t)
	res := call(t, ts, "grep", `{"pattern":"needle"}`)
	want := "README.md:2:find the needle here\n" +
		"readme-link.md:2:find the needle here\n" +
		"src/deep/x.ts:1:const needle = 1;\n" +
		"src/main.go:3:// needle one\n"
	if res.IsError || res.Output != want {
		t.Fatalf("grep needle = %+v\nwant output %q", res, want)
	}
	if wantLoc := []string{"README.md", "readme-link.md", "src/deep/x.ts", "src/main.go"}; !slices.Equal(res.Locations, wantLoc) {
		t.Errorf("Locations = %v, want %v", res.Locations, wantLoc)
	}
	if res.Title != `Grep "needle" in .` {
		t.Errorf("Title = %q", res.Title)
	}

	tests := []struct{ args, want string }{
		{`{"pattern":"(?i)needle","path":"src"}`, "src/deep/x.ts:1:const needle = 1;\nsrc/main.go:3:// needle one\nsrc/main.go:5:// Needle two\n"},
		{`{"pattern":"needle","glob":"*.go"}`, "src/main.go:3:// needle one\n"},
		{`{"pattern":"needle","glob":"src/*.go"}`, "src/main.go:3:// needle one\n"},
		{`{"pattern":"needle","glob":"deep/*.ts","path":"src"}`, "src/deep/x.ts:1:const needle = 1;\n"},
		{`{"pattern":"needle","glob":"**/*.ts"}`, "src/deep/x.ts:1:const needle = 1;\n"},
		{`{"pattern":"needle","glob":"**/*.md"}`, "README.md:2:find the needle here\nreadme-link.md:2:find the needle here\n"},
		{`{"pattern":"needle","path":"src/main.go"}`, "src/main.go:3:// needle one\n"},
		{`{"pattern":"needle","path":".git"}`, ".git/config:1:needle in git\n"},
		{`{"pattern":"^func \\w+\\(\\)"}`, "src/main.go:4:func main() {}\n"},
		{`{"pattern":"haystack"}`, `no matches for "haystack" in .`},
		{`{"pattern":"needle","path":"bin/tool"}`, "bin/tool is a binary file; grep searches text files only"},
	}
	for _, tt := range tests {
		res := call(t, ts, "grep", tt.args)
		if res.IsError || res.Output != tt.want {
			t.Errorf("grep %s = %+v\nwant output %q", tt.args, res, tt.want)
		}
	}
}

func TestGrepBadInput(t *testing.T) {
	ts, _ := grepTree(t)
	tests := []struct{ args, want string }{
		{`{"pattern":"func("}`, "invalid regular expression \"func(\": missing closing ): `func(`. The syntax is Go RE2"},
		{`{"pattern":"(?<=x)y"}`, "invalid regular expression"},
		{`{"pattern":""}`, "pattern is empty"},
		{`{"pattern":"x","glob":"[a-"}`, `invalid glob "[a-"`},
		{`{"pattern":"x","path":"ext"}`, "outside the workspace"},
		{`{"pattern":"x","path":"leak.txt"}`, "outside the workspace"},
		{`{"pattern":"x","path":"nope"}`, `"nope" does not exist`},
		{`{"path":"src"}`, `missing required argument "pattern"`},
		{`{"pattern":["x"]}`, `"pattern" of grep must be a string, not array`},
		{`{"pattern":"x","recursive":true}`, `unknown argument "recursive"`},
	}
	for _, tt := range tests {
		res := call(t, ts, "grep", tt.args)
		if !res.IsError || !strings.Contains(res.Output, tt.want) {
			t.Errorf("grep %s = %+v\nwant an error containing %q", tt.args, res, tt.want)
		}
	}
}

func TestGrepCaps(t *testing.T) {
	r, root, _ := newTree(t)
	var b strings.Builder
	for i := range maxGrepMatches + 50 {
		fmt.Fprintf(&b, "hit %d\n", i)
	}
	writeFile(t, filepath.Join(root, "many.txt"), b.String())
	writeFile(t, filepath.Join(root, "wide.txt"), "hit "+strings.Repeat("w", 100000)+"\n")
	ts := NewToolset(r)

	res := call(t, ts, "grep", `{"pattern":"^hit \\d+$"}`)
	lines := strings.Split(strings.TrimSuffix(res.Output, "\n"), "\n")
	if res.IsError || len(lines) != maxGrepMatches+1 || lines[0] != "many.txt:1:hit 0" ||
		lines[maxGrepMatches] != "[and 50 more matches; narrow the pattern, path or glob]" {
		t.Errorf("grep with %d matches: %d lines, last %q", maxGrepMatches+50, len(lines), lines[len(lines)-1])
	}

	res = call(t, ts, "grep", `{"pattern":"hit w","glob":"wide.txt"}`)
	want := "wide.txt:1:hit " + strings.Repeat("w", maxGrepLineRunes-4) + " [line truncated]\n"
	if res.IsError || res.Output != want {
		t.Errorf("grep of a 100 KB line = %q", res.Output[:min(len(res.Output), 300)])
	}
}

// bigTree writes dirs×files small text files under root/gen.
func bigTree(t testing.TB, root string, dirs, files int) {
	t.Helper()
	body := strings.Repeat("lorem ipsum dolor sit amet\n", 40) + "the needle\n"
	for d := range dirs {
		for f := range files {
			writeFile(t, filepath.Join(root, "gen", fmt.Sprintf("d%03d", d), fmt.Sprintf("f%03d.txt", f)), body)
		}
	}
}

func TestGrepCancelled(t *testing.T) {
	r, root, _ := newTree(t)
	bigTree(t, root, 40, 50)
	ts := NewToolset(r)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := ts.Run(ctx, "grep", []byte(`{"pattern":"needle"}`))
	if !res.IsError || res.Output != "grep was cancelled before it finished" {
		t.Errorf("grep with a cancelled context = %+v", res)
	}

	// Cancel in the middle of the walk: after 100 checks (about 100 of the
	// 2000 files). The walk must stop at the next check, not finish the tree.
	cd := newCountdownCtx(100)
	res = ts.Run(cd, "grep", []byte(`{"pattern":"needle"}`))
	if !res.IsError || !strings.Contains(res.Output, "grep was cancelled") {
		t.Errorf("grep cancelled mid-walk: IsError %v, output ending %q", res.IsError, res.Output[max(0, len(res.Output)-200):])
	}
	if n := cd.checks.Load(); n > 102 {
		t.Errorf("grep polled the context %d more times after it was cancelled", n-101)
	}
	if strings.Contains(res.Output, "needle") {
		t.Errorf("a cancelled grep returned partial matches as if complete: %q...", res.Output[:min(200, len(res.Output))])
	}

	// And the same tree without cancellation finds every file.
	res = call(t, ts, "grep", `{"pattern":"needle"}`)
	if res.IsError || !strings.HasSuffix(res.Output, "[and 1800 more matches; narrow the pattern, path or glob]\n") {
		t.Errorf("grep of the whole tree: tail %q", res.Output[max(0, len(res.Output)-100):])
	}
}

// grep respects .gitignore files (nested ones too, and re-includes) and the
// default ignore list.
func TestGrepRespectsIgnoreRules(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		".gitignore":          "*.log\n",
		"keep.txt":            "needle\n",
		"debug.log":           "needle\n",
		"sub/.gitignore":      "gen/\n!important.log\n",
		"sub/important.log":   "needle\n",
		"sub/gen/out.txt":     "needle\n",
		"sub/code.go":         "needle\n",
		"node_modules/x/y.js": "needle\n",
		"dist/bundle.js":      "needle\n",
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	r, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ts := NewToolset(r)
	for _, tc := range []struct{ args, want string }{
		{`{"pattern":"needle"}`, "keep.txt:1:needle\nsub/code.go:1:needle\nsub/important.log:1:needle\n"},
		{`{"pattern":"needle","path":"sub"}`, "sub/code.go:1:needle\nsub/important.log:1:needle\n"},
	} {
		res := ts.Run(context.Background(), "grep", json.RawMessage(tc.args))
		if res.IsError || res.Output != tc.want {
			t.Errorf("grep %s:\n%s\nwant:\n%s", tc.args, res.Output, tc.want)
		}
	}
}
