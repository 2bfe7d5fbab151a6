package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestEditFile(t *testing.T) {
	r, root, _ := newTree(t)
	abs := filepath.Join(root, "src", "main.go")
	old := "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"
	writeFile(t, abs, old)
	if err := os.Chmod(abs, 0o600); err != nil {
		t.Fatal(err)
	}
	ts, w := recordingToolset(r)
	res := call(t, ts, "edit_file", `{"path":"src/main.go","old_string":"\tprintln(\"hi\")","new_string":"\tprintln(\"hello\")"}`)
	want := strings.Replace(old, `"hi"`, `"hello"`, 1)
	if res.IsError || res.Output != "Replaced 1 occurrence in src/main.go." {
		t.Fatalf("edit_file = %+v", res)
	}
	if res.Title != "Edit src/main.go" || !slices.Equal(res.Locations, []string{"src/main.go"}) || res.Hash != sha(want) {
		t.Errorf("Title %q, Locations %v, Hash %s", res.Title, res.Locations, res.Hash)
	}
	wantDiff := "--- a/src/main.go\n+++ b/src/main.go\n@@ -1,5 +1,5 @@\n package main\n \n func main() {\n-\tprintln(\"hi\")\n+\tprintln(\"hello\")\n }\n"
	if d := res.Diff; d == nil || d.Path != "src/main.go" || d.Old != old || d.New != want || d.Unified != wantDiff {
		t.Errorf("Diff = %+v, want Unified %q", d, wantDiff)
	}
	if got := readString(t, abs); got != want {
		t.Errorf("file holds %q, want %q", got, want)
	}
	if fi, _ := os.Stat(abs); fi.Mode() != 0o600 {
		t.Errorf("mode after edit = %v, want -rw-------", fi.Mode())
	}
	if got := w.list(); !slices.Equal(got, []string{"src/main.go=" + want}) {
		t.Errorf("OnWrite calls = %q", got)
	}
	assertNoTemp(t, root)
}

func TestEditFileReplaceAll(t *testing.T) {
	r, root, _ := newTree(t)
	abs := filepath.Join(root, "a.txt")
	writeFile(t, abs, "x = 1\ny = x\nz = x + x\n")
	ts := NewToolset(r)

	res := call(t, ts, "edit_file", `{"path":"a.txt","old_string":"x","new_string":"v"}`)
	if !res.IsError || res.Output != "old_string occurs 4 times in a.txt; include more surrounding lines to make it unique, or set replace_all to true to replace every occurrence" {
		t.Errorf("edit_file of a non-unique string = %+v", res)
	}
	if res.Title != "Edit a.txt" {
		t.Errorf("Title = %q", res.Title)
	}
	if got := readString(t, abs); got != "x = 1\ny = x\nz = x + x\n" {
		t.Fatalf("a failed edit changed the file to %q", got)
	}

	res = call(t, ts, "edit_file", `{"path":"a.txt","old_string":"x","new_string":"v","replace_all":true}`)
	if res.IsError || res.Output != "Replaced 4 occurrences in a.txt." || readString(t, abs) != "v = 1\ny = v\nz = v + v\n" {
		t.Errorf("edit_file replace_all = %+v, file %q", res, readString(t, abs))
	}

	// replace_all with a single occurrence is fine; false is the default.
	res = call(t, ts, "edit_file", `{"path":"a.txt","old_string":"z = ","new_string":"w = ","replace_all":true}`)
	if res.IsError || res.Output != "Replaced 1 occurrence in a.txt." {
		t.Errorf("edit_file replace_all of one = %+v", res)
	}
	res = call(t, ts, "edit_file", `{"path":"a.txt","old_string":"w = ","new_string":"z = ","replace_all":false}`)
	if res.IsError || readString(t, abs) != "v = 1\ny = v\nz = v + v\n" {
		t.Errorf("edit_file replace_all false = %+v", res)
	}
}

func TestEditFileErrors(t *testing.T) {
	r, root, _ := newTree(t)
	abs := filepath.Join(root, "a.txt")
	content := "func f() {\n\treturn 1\n}\n"
	writeFile(t, abs, content)
	writeFile(t, filepath.Join(root, "crlf.txt"), "one\r\ntwo\r\n")
	writeFile(t, filepath.Join(root, "blob.bin"), "\x00\x01\x02abc")
	mkdir(t, filepath.Join(root, "dir"))
	ts, w := recordingToolset(r)
	tests := []struct{ args, want string }{
		{`{"path":"a.txt","old_string":"return 2","new_string":"return 3"}`,
			"old_string not found in a.txt; read the file again and copy the exact text, including whitespace"},
		// Spaces where the file has a tab.
		{`{"path":"a.txt","old_string":"    return 1","new_string":"    return 2"}`, "old_string not found in a.txt"},
		{`{"path":"crlf.txt","old_string":"one\ntwo","new_string":"1\n2"}`, "not found in crlf.txt; read the file again and copy the exact text, including whitespace (the file has CRLF line endings)"},
		{`{"path":"a.txt","old_string":"return 1","new_string":"return 1"}`, "old_string and new_string are the same"},
		{`{"path":"a.txt","old_string":"","new_string":"x"}`, "old_string is empty"},
		{`{"path":"missing.go","old_string":"a","new_string":"b"}`, `file "missing.go" does not exist; use write_file to create it`},
		{`{"path":"dir","old_string":"a","new_string":"b"}`, `"dir" is a directory, not a file`},
		{`{"path":"blob.bin","old_string":"abc","new_string":"xyz"}`, `"blob.bin" is a binary file; edit_file changes text files only`},
		{`{"path":"a.txt","old_string":"a","new_string":"b","replace_all":"yes"}`, `"replace_all" of edit_file must be a boolean, not string`},
		{`{"path":"a.txt","old_string":"a"}`, `missing required argument "new_string" for edit_file`},
		{`{"path":"a.txt","new_string":"a"}`, `missing required argument "old_string" for edit_file`},
	}
	for _, tt := range tests {
		res := call(t, ts, "edit_file", tt.args)
		if !res.IsError || !strings.Contains(res.Output, tt.want) {
			t.Errorf("edit_file %s = %+v, want an error containing %q", tt.args, res, tt.want)
		}
	}
	if got := readString(t, abs); got != content {
		t.Errorf("failed edits changed a.txt to %q", got)
	}
	if _, err := os.Stat(filepath.Join(root, "missing.go")); err == nil {
		t.Error("edit_file created a missing file")
	}
	if got := w.list(); len(got) != 0 {
		t.Errorf("OnWrite called for failed edits: %q", got)
	}
}

// TestEditFileThroughSymlink edits a file by a link that stays inside.
func TestEditFileThroughSymlink(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "real.txt"), "alpha\n")
	symlink(t, "real.txt", filepath.Join(root, "alias.txt"))
	res := call(t, NewToolset(r), "edit_file", `{"path":"alias.txt","old_string":"alpha","new_string":"beta"}`)
	if res.IsError || res.Title != "Edit real.txt" || readString(t, filepath.Join(root, "real.txt")) != "beta\n" {
		t.Errorf("edit_file through a symlink = %+v", res)
	}
	if fi, err := os.Lstat(filepath.Join(root, "alias.txt")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Error("alias.txt is no longer a symlink")
	}
}
