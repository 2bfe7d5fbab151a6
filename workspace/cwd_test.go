package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearthd/hearth/workspace/sandbox"
)

// A session opened in a subdirectory of the workspace (its working
// directory): the model's paths start there and may lead above it inside
// the root, never out; what it is shown is relative to it; Locations, the
// diffs and OnWrite stay relative to the root.
func TestToolsetInWorkingDirectory(t *testing.T) {
	r, rootDir, outside := newTree(t)
	writeFile(t, filepath.Join(rootDir, "README.md"), "top needle\n")
	writeFile(t, filepath.Join(rootDir, "sub", "other.txt"), "one\ntwo\nthree\n")
	writeFile(t, filepath.Join(rootDir, "sub", "dir", "x.go"), "package x // needle\n")
	var wrote []string
	base := NewToolset(r)
	base.OnWrite = func(rel string, _ []byte) { wrote = append(wrote, rel) }
	ts := base.In("sub/dir")

	res := call(t, ts, "read_file", `{"path":"../../README.md"}`)
	if res.IsError || !strings.Contains(res.Output, "top needle") || res.Title != "Read ../../README.md" ||
		len(res.Locations) != 1 || res.Locations[0] != "README.md" {
		t.Errorf("read_file ../../README.md: %+v", res)
	}
	res = call(t, ts, "read_file", `{"path":"x.go"}`)
	if res.IsError || res.Locations[0] != "sub/dir/x.go" || res.Title != "Read x.go" {
		t.Errorf("read_file x.go: %+v", res)
	}
	rel, err := filepath.Rel(filepath.Join(rootDir, "sub", "dir"), filepath.Join(outside, "secret.txt"))
	if err != nil {
		t.Fatal(err)
	}
	res = call(t, ts, "read_file", mustJSON(t, map[string]string{"path": rel}))
	if !res.IsError || !strings.Contains(res.Output, "is outside the workspace; use a path relative to the working directory") {
		t.Errorf("read_file %s (out of the root): %+v", rel, res)
	}
	if _, _, err := ts.at.resolveName("../../.."); !errors.Is(err, ErrOutside) {
		t.Errorf("../../.. from sub/dir: %v, want outside", err)
	}

	res = call(t, ts, "list_dir", `{"path":"."}`)
	if res.IsError || !strings.Contains(res.Output, "x.go") || res.Locations[0] != "sub/dir" || res.Title != "List ./" {
		t.Errorf("list_dir .: %+v", res)
	}
	res = call(t, ts, "grep", `{"pattern":"needle","path":"../.."}`)
	if res.IsError || !strings.Contains(res.Output, "../../README.md:1:top needle") || !strings.Contains(res.Output, "\nx.go:1:") ||
		strings.Join(res.Locations, ",") != "README.md,sub/dir/x.go" {
		t.Errorf("grep from the root: %+v", res)
	}

	res = call(t, ts, "write_file", `{"path":"new.txt","content":"hi\n"}`)
	if res.IsError || res.Output != "Created new.txt (1 line, 3 bytes)." || res.Locations[0] != "sub/dir/new.txt" ||
		res.Diff == nil || res.Diff.Path != "sub/dir/new.txt" {
		t.Errorf("write_file new.txt: %+v", res)
	}
	if b, err := os.ReadFile(filepath.Join(rootDir, "sub", "dir", "new.txt")); err != nil || string(b) != "hi\n" {
		t.Errorf("new.txt: %q, %v", b, err)
	}
	patch := "*** Begin Patch\n*** Update File: ../other.txt\n@@\n one\n-two\n+2\n three\n*** End Patch\n"
	res = call(t, ts, "apply_patch", mustJSON(t, map[string]string{"input": patch}))
	if res.IsError || !strings.Contains(res.Output, "\nM ../other.txt\n") || len(res.Files) != 1 || res.Files[0].Path != "sub/other.txt" {
		t.Errorf("apply_patch ../other.txt: %+v", res)
	}
	// The shell's cd, and the patch it applies, start at the working directory.
	shellPatch := "cd .. && apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: other.txt\n@@\n-2\n+two\n*** End Patch\nEOF"
	res = call(t, ts, "shell", mustJSON(t, map[string]string{"command": shellPatch}))
	if b, _ := os.ReadFile(filepath.Join(rootDir, "sub", "other.txt")); res.IsError || string(b) != "one\ntwo\nthree\n" {
		t.Errorf("shell apply_patch after cd ..: %+v; other.txt %q", res, b)
	}
	if strings.Join(wrote, ",") != "sub/dir/new.txt,sub/other.txt,sub/other.txt" {
		t.Errorf("OnWrite heard %q, want paths relative to the root", wrote)
	}
	if sandbox.Unsupported == "" {
		res = call(t, ts, "shell", `{"command":"pwd"}`)
		if want := filepath.Join(rootDir, "sub", "dir"); res.IsError || !strings.HasPrefix(body(res.Output), want+"\n") {
			t.Errorf("shell pwd: %+v, want %s", res, want)
		}
	}

	// Previews title the call as the model named its path, and locate it in
	// the root.
	pv, err := ts.Preview(context.Background(), "edit_file", json.RawMessage(`{"path":"x.go","old_string":"needle","new_string":"pin"}`))
	if err != nil || pv.Title != "Edit x.go" || pv.Locations[0] != "sub/dir/x.go" {
		t.Errorf("edit_file preview: %+v, %v", pv, err)
	}
}

// In(".") and In("") are the root: nothing changes for a session opened
// there.
func TestToolsetInRoot(t *testing.T) {
	r, rootDir, _ := newTree(t)
	writeFile(t, filepath.Join(rootDir, "a", "b.txt"), "b\n")
	for _, dir := range []string{"", "."} {
		res := call(t, NewToolset(r).In(dir), "read_file", `{"path":"a/b.txt"}`)
		if res.IsError || res.Title != "Read a/b.txt" || res.Locations[0] != "a/b.txt" {
			t.Errorf("In(%q): %+v", dir, res)
		}
	}
}
