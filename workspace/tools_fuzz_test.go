package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// toolFuzzArgs reads every argument any tool takes, leniently: a field of
// the wrong type stays nil. It is what the checks compare results with.
type toolFuzzArgs struct {
	Path      *string `json:"path"`
	Content   *string `json:"content"`
	OldString *string `json:"old_string"`
	NewString *string `json:"new_string"`
	Command   *string `json:"command"`
	Pattern   *string `json:"pattern"`
	Glob      *string `json:"glob"`
	Input     *string `json:"input"`
}

// FuzzToolArguments sends arbitrary argument bytes to every tool: Preview
// for all of them, Run for the read-only ones (read_file, list_dir, grep;
// never the write tools or shell), in a workspace whose symlinks lead out to
// a file holding fuzzSecret. It checks that nothing panics (Run and Preview
// turn a panic into an "internal error" message, which fails the test); that
// nothing on disk changes, in the workspace or outside it; that no output
// holds the secret the arguments did not bring; that every location is a
// clean path inside the workspace; and that every answer is either a result
// (a title, a non-empty output, for write_file and edit_file a diff of the
// arguments' content or of the file as it is, for shell the command) or an
// error message the model can act on: non-empty, naming the tool, one of its
// arguments, or quoting the path, pattern or glob it was given.
//
//	go test ./workspace -run '^$' -fuzz FuzzToolArguments -fuzztime 1m
//
// Seeds: below, and testdata/fuzz/FuzzToolArguments.
func FuzzToolArguments(f *testing.F) {
	base, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	for p, content := range map[string]string{
		filepath.Join(outside, "secret.txt"):   fuzzSecret + "\n",
		filepath.Join(root, "a.txt"):           "alpha\nbeta\nalpha\n",
		filepath.Join(root, "crlf.txt"):        "one\r\ntwo\r\n",
		filepath.Join(root, "empty.txt"):       "",
		filepath.Join(root, "bin.dat"):         "\x00\x01\x02binary",
		filepath.Join(root, "sub", "x.txt"):    "x marks\n",
		filepath.Join(root, ".gitignore"):      "ignored/\n",
		filepath.Join(root, "ignored", "i.go"): "package ignored\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"out":      outside,
		"leak":     filepath.Join(outside, "secret.txt"),
		"sub/up":   "../../outside",
		"in":       "sub",
		"loop":     "loop",
		"dangling": "nope",
	} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))); err != nil {
			f.Fatal(err)
		}
	}
	r, err := Open(root)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { r.Close() })
	ts := NewToolset(r)
	before := treeState(f, base)

	for _, seed := range []string{
		`{"path":"a.txt"}`,
		`{"path":"a.txt","old_string":"beta","new_string":"gamma"}`,
		`{"path":"new/f.txt","content":"hello\n"}`,
		`{"command":"rm -rf /","timeout_ms":1000}`,
		`{"pattern":"alpha","path":".","glob":"*.txt"}`,
		`{"path":"out/secret.txt","content":"x","pattern":"FUZZ"}`,
		`{"input":"*** Begin Patch\n*** Update File: a.txt\n@@\n-beta\n+gamma\n*** Add File: sub/new.txt\n+n\n*** Delete File: empty.txt\n*** End Patch"}`,
		`{"command":"apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: out/secret.txt\n-x\n+y\n*** End Patch\nEOF"}`,
		`{"path":1}`,
		``,
		`[]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		var a toolFuzzArgs
		_ = json.Unmarshal(args, &a)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, tool := range ts.Tools() {
			d := findTool(tool.Name)
			p, err := ts.Preview(ctx, tool.Name, args)
			if err != nil {
				checkToolMessage(t, r, d, &a, "Preview", err.Error())
			} else {
				checkPreview(t, r, d, &a, p)
			}
			if tool.ReadOnly {
				checkRunResult(t, r, d, &a, ts.Run(ctx, tool.Name, args))
			}
		}
		if after := treeState(t, base); after != before {
			t.Fatalf("the tree changed under %q:\nbefore:\n%s\nafter:\n%s", args, before, after)
		}
	})
}

// checkPreview checks a Preview a tool accepted.
func checkPreview(t *testing.T, r *Root, d *toolDef, a *toolFuzzArgs, p Preview) {
	t.Helper()
	if (p.Kind != d.Kind && p.As == "") || p.Title == "" {
		t.Fatalf("%s: Preview kind %q title %q, want kind %q and a title", d.Name, p.Kind, p.Title, d.Kind)
	}
	checkLocations(t, d, p.Locations)
	checkNoSecret(t, d, a, p.Title+"\n"+p.Command)
	switch d.Name {
	case "write_file", "edit_file":
		if p.Diff == nil || len(p.Locations) != 1 || p.Diff.Path != p.Locations[0] {
			t.Fatalf("%s: Preview diff %+v for locations %q", d.Name, p.Diff, p.Locations)
		}
		if d.Name == "write_file" && (a.Content == nil || p.Diff.New != *a.Content) {
			t.Fatalf("write_file: Preview would write %q, the arguments give %v", p.Diff.New, a.Content)
		}
		if d.Name == "edit_file" {
			b, err := os.ReadFile(filepath.Join(r.Path(), filepath.FromSlash(p.Diff.Path)))
			if err != nil || p.Diff.Old != string(b) {
				t.Fatalf("edit_file: Preview diff starts from %q, the file holds %q (%v)", p.Diff.Old, b, err)
			}
		}
		if (p.Diff.Old == p.Diff.New) != (p.Diff.Unified == "") {
			t.Fatalf("%s: old and new equal %v but unified diff %q", d.Name, p.Diff.Old == p.Diff.New, p.Diff.Unified)
		}
		checkNoSecret(t, d, a, p.Diff.Old)
	case "apply_patch":
		if len(p.Files) == 0 || p.Diff != nil {
			t.Fatalf("apply_patch: Preview files %+v, diff %+v", p.Files, p.Diff)
		}
		for _, f := range p.Files {
			checkNoSecret(t, d, a, f.Old)
		}
	case "shell":
		if p.As == "apply_patch" {
			break // a patch: the apply_patch tests check what it does
		}
		if a.Command == nil || p.Command != *a.Command || strings.TrimSpace(p.Command) == "" {
			t.Fatalf("shell: Preview command %q, the arguments give %v", p.Command, a.Command)
		}
	}
}

// checkRunResult checks what a read-only tool's Run returned.
func checkRunResult(t *testing.T, r *Root, d *toolDef, a *toolFuzzArgs, res Result) {
	t.Helper()
	if res.IsError {
		checkToolMessage(t, r, d, a, "Run", res.Output)
		return
	}
	if res.Output == "" || res.Title == "" {
		t.Fatalf("%s: Run succeeded with output %q, title %q", d.Name, res.Output, res.Title)
	}
	checkLocations(t, d, res.Locations)
	checkNoSecret(t, d, a, res.Output)
}

// checkToolMessage checks an error message for the model.
func checkToolMessage(t *testing.T, r *Root, d *toolDef, a *toolFuzzArgs, what, msg string) {
	t.Helper()
	if strings.Contains(msg, "internal error") || strings.Contains(msg, "cancelled") {
		t.Fatalf("%s %s: %s", d.Name, what, msg)
	}
	checkNoSecret(t, d, a, msg)
	names := append([]string{d.Name}, d.fields...)
	if d.Name == "shell" {
		names = append(names, "apply_patch") // a command that is an apply_patch invocation
	}
	for _, s := range []*string{a.Path, a.Pattern, a.Glob} {
		if s != nil {
			names = append(names, strconv.Quote(*s))
		}
	}
	if a.Path != nil {
		if abs, err := r.Resolve(*a.Path); err == nil {
			names = append(names, strconv.Quote(r.Rel(abs)))
		}
	}
	for _, n := range names {
		if strings.Contains(msg, n) {
			return
		}
	}
	t.Fatalf("%s %s error %q names neither the tool, nor an argument, nor the path", d.Name, what, msg)
}

// checkLocations checks that every location is a clean workspace-relative
// slash path.
func checkLocations(t *testing.T, d *toolDef, locs []string) {
	t.Helper()
	for _, l := range locs {
		if l == "" || path.IsAbs(l) || filepath.IsAbs(l) || path.Clean(l) != l || l == ".." || strings.HasPrefix(l, "../") {
			t.Fatalf("%s: location %q is not a clean path inside the workspace", d.Name, l)
		}
	}
}

// checkNoSecret fails if out holds the content of the file outside the
// workspace and the arguments did not bring it.
func checkNoSecret(t *testing.T, d *toolDef, a *toolFuzzArgs, out string) {
	t.Helper()
	if !strings.Contains(out, fuzzSecret) {
		return
	}
	for _, s := range []*string{a.Path, a.Content, a.OldString, a.NewString, a.Command, a.Pattern, a.Glob, a.Input} {
		if s != nil && strings.Contains(*s, fuzzSecret) {
			return
		}
	}
	t.Fatalf("%s returned the file outside the workspace: %q", d.Name, out)
}

// treeState describes every entry below dir: its type, permissions, size,
// modification time and, for a file, a hash of its content; for a symlink
// its target.
func treeState(tb testing.TB, dir string) string {
	tb.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d %d", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			b.WriteString(" -> " + target)
		case fi.Mode().IsRegular():
			content, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(content)
			b.WriteString(" " + hex.EncodeToString(sum[:8]))
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return b.String()
}
