package workspace

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestListDir(t *testing.T) {
	r, root, outside := newTree(t)
	writeFile(t, filepath.Join(root, "b.txt"), "b")
	writeFile(t, filepath.Join(root, "a.txt"), "a")
	writeFile(t, filepath.Join(root, "sub", "deep", "x.go"), "x")
	writeFile(t, filepath.Join(root, ".git", "HEAD"), "ref: refs/heads/main\n")
	symlink(t, "a.txt", filepath.Join(root, "link"))
	symlink(t, outside, filepath.Join(root, "ext"))
	ts := NewToolset(r)

	res := call(t, ts, "list_dir", `{"path":"."}`)
	want := ".git/\na.txt\nb.txt\next -> " + filepath.ToSlash(outside) + "\nlink -> a.txt\nsub/\n"
	if res.IsError || res.Output != want {
		t.Fatalf("list_dir . = %+v\nwant output %q", res, want)
	}
	if res.Title != "List ./" || !slices.Equal(res.Locations, []string{"."}) {
		t.Errorf("Title = %q, Locations = %v", res.Title, res.Locations)
	}

	res = call(t, ts, "list_dir", `{"path":"sub"}`)
	if res.IsError || res.Output != "deep/\n" || res.Title != "List sub/" {
		t.Errorf("list_dir sub = %+v", res)
	}
	res = call(t, ts, "list_dir", `{"path":""}`)
	if res.IsError || !strings.HasPrefix(res.Output, ".git/\n") {
		t.Errorf(`list_dir "" = %+v, want the root`, res)
	}
}

func TestListDirEmptyAndCapped(t *testing.T) {
	r, root, _ := newTree(t)
	mkdir(t, filepath.Join(root, "empty"))
	for i := range maxListEntries + 5 {
		writeFile(t, filepath.Join(root, "many", fmt.Sprintf("f%04d", i)), "")
	}
	ts := NewToolset(r)

	if res := call(t, ts, "list_dir", `{"path":"empty"}`); res.IsError || res.Output != "(empty)" {
		t.Errorf("list_dir of an empty directory = %+v", res)
	}
	res := call(t, ts, "list_dir", `{"path":"many"}`)
	lines := strings.Split(strings.TrimSuffix(res.Output, "\n"), "\n")
	if res.IsError || len(lines) != maxListEntries+1 || lines[0] != "f0000" || lines[maxListEntries-1] != "f0999" ||
		!strings.HasPrefix(lines[maxListEntries], "[and 5 more entries") {
		t.Errorf("list_dir of %d entries: %d lines, last %q", maxListEntries+5, len(lines), lines[len(lines)-1])
	}
}

func TestListDirBadInput(t *testing.T) {
	r, root, outside := newTree(t)
	writeFile(t, filepath.Join(root, "a.txt"), "a")
	symlink(t, outside, filepath.Join(root, "ext"))
	ts := NewToolset(r)
	tests := []struct{ args, want string }{
		{`{"path":"a.txt"}`, `"a.txt" is a file, not a directory; use read_file`},
		{`{"path":"nope"}`, `directory "nope" does not exist`},
		{`{"path":"ext"}`, "outside the workspace"},
		{`{"path":".."}`, "outside the workspace"},
		{`{"path":true}`, `"path" of list_dir must be a string, not bool`},
		{`{"path":".","recursive":true}`, `unknown argument "recursive"`},
	}
	for _, tt := range tests {
		res := call(t, ts, "list_dir", tt.args)
		if !res.IsError || !strings.Contains(res.Output, tt.want) {
			t.Errorf("list_dir %s = %+v, want an error containing %q", tt.args, res, tt.want)
		}
		if strings.Contains(res.Output, "secret.txt") {
			t.Errorf("list_dir %s listed a directory outside the workspace", tt.args)
		}
	}
}
