package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearthd/hearth/workspace/patch"
)

// patchCall runs apply_patch with the patch given as its lines.
func patchCall(t *testing.T, ts *Toolset, lines ...string) Result {
	t.Helper()
	return call(t, ts, "apply_patch", mustJSON(t, map[string]string{"input": strings.Join(lines, "\n") + "\n"}))
}

func readBack(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Hunks are found exactly, then ignoring trailing whitespace, then ignoring
// whitespace at both ends; the file keeps its own context lines and line
// ends.
func TestApplyPatchMatching(t *testing.T) {
	tests := []struct {
		name, file string
		hunk       []string
		want       string
	}{
		{"exact", "a\nb\nc\n", []string{" a", "-b", "+B", " c"}, "a\nB\nc\n"},
		{"trailing whitespace in the file", "a  \nb\t\nc\n", []string{" a", "-b", "+B", " c"}, "a  \nB\nc\n"},
		{"indentation differs", "\tif x {\n\t\ty()\n\t}\n", []string{" if x {", "-  y()", "+  z()", " }"}, "\tif x {\n  z()\n\t}\n"},
		{"exact wins over a looser match earlier", "b \nb\n", []string{"-b", "+B"}, "b \nB\n"},
		{"CRLF file keeps CRLF", "a\r\nb\r\nc\r\n", []string{" a", "-b", "+B", "+B2", " c"}, "a\r\nB\r\nB2\r\nc\r\n"},
		{"no final newline kept", "a\nb", []string{" a", "-b", "+B"}, "a\nB"},
		{"an empty line added after a last line without newline", "a", []string{" a", "+"}, "a\n\n"},
		{"added lines only, at the end", "a\n", []string{"+b"}, "a\nb\n"},
		{"empty file", "", []string{"+first"}, "first\n"},
		{"an empty line as a bare blank", "a\n\nb\n", []string{" a", "", "-b", "+c"}, "a\n\nc\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, root, _ := newTree(t)
			writeFile(t, filepath.Join(root, "f.txt"), tt.file)
			lines := append([]string{"*** Begin Patch", "*** Update File: f.txt", "@@"}, tt.hunk...)
			res := patchCall(t, NewToolset(r), append(lines, "*** End Patch")...)
			if res.IsError {
				t.Fatalf("apply_patch failed: %s", res.Output)
			}
			if got := readBack(t, filepath.Join(root, "f.txt")); got != tt.want {
				t.Fatalf("f.txt = %q, want %q", got, tt.want)
			}
		})
	}
}

// "@@ header" narrows the search to after the header's line; several hunks
// apply in order; "End of File" finds the hunk at the end of the file.
func TestApplyPatchHeadersHunksAndEndOfFile(t *testing.T) {
	r, root, _ := newTree(t)
	file := "func a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 1\n}\n\nreturn 1\n"
	writeFile(t, filepath.Join(root, "x.go"), file)
	res := patchCall(t, NewToolset(r),
		"*** Begin Patch",
		"*** Update File: x.go",
		"@@ func b() {",
		"-\treturn 1",
		"+\treturn 2",
		"@@",
		"-return 1",
		"+return 3",
		"*** End of File",
		"*** End Patch")
	if res.IsError {
		t.Fatal(res.Output)
	}
	want := "func a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 2\n}\n\nreturn 3\n"
	if got := readBack(t, filepath.Join(root, "x.go")); got != want {
		t.Fatalf("x.go =\n%s\nwant\n%s", got, want)
	}
	if res.Output != "Success. Updated the following files:\nM x.go\n" || res.Title != "Patch x.go" {
		t.Errorf("output %q, title %q", res.Output, res.Title)
	}
	if len(res.Files) != 1 || res.Files[0].Path != "x.go" || res.Files[0].Old != file || res.Files[0].New != want ||
		res.Files[0].Hash != contentHash(want) || !strings.Contains(res.Files[0].Unified, "+\treturn 2") {
		t.Errorf("files %+v", res.Files)
	}
	if res.Diff != nil || res.Hash != "" {
		t.Errorf("apply_patch set the single-file Diff %v or Hash %q", res.Diff, res.Hash)
	}
}

// Add creates its directories, Delete removes, Move renames (keeping the
// executable bit) and changes the content on the way.
func TestApplyPatchAddDeleteMove(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "gone.txt"), "bye\n")
	writeFile(t, filepath.Join(root, "old", "run.sh"), "#!/bin/sh\necho old\n")
	if err := os.Chmod(filepath.Join(root, "old", "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	var noted []string
	ts := NewToolset(r)
	ts.OnWrite = func(rel string, content []byte) { noted = append(noted, rel+"="+string(content)) }
	res := patchCall(t, ts,
		"*** Begin Patch",
		"*** Add File: new/deep/hello.txt",
		"+hello",
		"+world",
		"*** Delete File: gone.txt",
		"*** Update File: old/run.sh",
		"*** Move to: bin/run.sh",
		"@@",
		"-echo old",
		"+echo new",
		"*** End Patch")
	if res.IsError {
		t.Fatal(res.Output)
	}
	if got := readBack(t, filepath.Join(root, "new", "deep", "hello.txt")); got != "hello\nworld\n" {
		t.Errorf("added file = %q", got)
	}
	for _, p := range []string{"gone.txt", "old/run.sh"} {
		if _, err := os.Stat(filepath.Join(root, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still there: %v", p, err)
		}
	}
	moved := filepath.Join(root, "bin", "run.sh")
	if got := readBack(t, moved); got != "#!/bin/sh\necho new\n" {
		t.Errorf("moved file = %q", got)
	}
	if fi, err := os.Stat(moved); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("moved script lost its executable bit: %v %v", fi.Mode(), err)
	}
	if want := "Success. Updated the following files:\nA new/deep/hello.txt\nM bin/run.sh\nD gone.txt\n"; res.Output != want {
		t.Errorf("output %q", res.Output)
	}
	if want := []string{"new/deep/hello.txt", "gone.txt", "old/run.sh", "bin/run.sh"}; strings.Join(res.Locations, " ") != strings.Join(want, " ") {
		t.Errorf("locations %q", res.Locations)
	}
	if len(res.Files) != 3 || !res.Files[1].Deleted || res.Files[1].Hash != "" || res.Files[2].From != "old/run.sh" || res.Files[2].Path != "bin/run.sh" {
		t.Errorf("files %+v", res.Files)
	}
	if want := "new/deep/hello.txt=hello\nworld\n bin/run.sh=#!/bin/sh\necho new\n"; strings.Join(noted, " ") != want {
		t.Errorf("OnWrite heard %q", noted)
	}
}

// A patch that cannot apply everywhere changes nothing, and says which
// hunk of which file failed and why.
func TestApplyPatchAllOrNothing(t *testing.T) {
	tests := []struct {
		name  string
		patch []string
		want  string
	}{
		{"second hunk not found", []string{"*** Update File: a.go", "@@", "-one", "+1", "@@", " two", "-three", "+3"},
			`hunk 2 of a.go (line 8 of the patch, starting " two"): the expected lines (context and '-' lines) are not in the file; the closest match, at line 2, differs at line 3: the file has "tree", the patch "three"; read the file again and copy them exactly. The expected lines:` + "\ntwo\nthree"},
		{"nothing close", []string{"*** Update File: a.go", "-zzz", "+y"},
			`hunk 1 of a.go (line 5 of the patch, starting "-zzz"): the expected lines (context and '-' lines) are not in the file; read the file again and copy them exactly. The expected lines:` + "\nzzz"},
		{"hunks out of order", []string{"*** Update File: a.go", "@@", "-two", "+2", "@@", "-one", "+1"},
			"hunk 2 of a.go (line 8 of the patch, starting \"-one\"): its lines are at line 1, before the previous hunk's change"},
		{"header not found", []string{"*** Update File: a.go", "@@ func nope()", "-one", "+1"},
			`hunk 1 of a.go (line 5 of the patch, @@ "func nope()"): no line matching the @@ line "func nope()" was found; read the file again`},
		{"add over a file", []string{"*** Add File: a.go", "+x"}, "*** Add File: a.go: the file already exists"},
		{"delete a missing file", []string{"*** Delete File: nope.txt"}, "cannot read nope.txt to delete it: there is no such file"},
		{"update a missing file", []string{"*** Update File: nope.txt", "-x"}, "cannot read nope.txt to update it: there is no such file; create it with *** Add File:"},
		{"move onto a file", []string{"*** Update File: a.go", "*** Move to: b.txt", "-one", "+1"}, "*** Move to: b.txt: the file already exists"},
		{"a file twice", []string{"*** Update File: a.go", "-one", "+1", "*** Delete File: ./a.go"}, "a.go is changed twice, at lines 4 and 7 of the patch"},
		{"binary", []string{"*** Update File: bin.dat", "-x", "+y"}, "it is a binary file"},
		{"directory", []string{"*** Delete File: dir"}, `"dir" is a directory, not a file`},
		{"delete a link", []string{"*** Delete File: link.txt"}, "*** Delete File: link.txt: the path is a symlink to b.txt; apply_patch does not remove links"},
		{"move a link", []string{"*** Update File: link.txt", "*** Move to: c.txt", "-b", "+c"}, "*** Move to: c.txt: the path is a symlink to b.txt"},
		{"parse error", []string{"*** Update File: a.go", "one"}, "invalid patch: line 5: expected a hunk line starting with ' ', '-' or '+', got \"one\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, root, _ := newTree(t)
			writeFile(t, filepath.Join(root, "a.go"), "one\ntwo\ntree\n")
			writeFile(t, filepath.Join(root, "b.txt"), "b\n")
			writeFile(t, filepath.Join(root, "bin.dat"), "x\x00y\n")
			mkdir(t, filepath.Join(root, "dir"))
			symlink(t, "b.txt", filepath.Join(root, "link.txt"))
			before := treeState(t, root)
			// A change that would apply comes first: it must not happen either.
			lines := append([]string{"*** Begin Patch", "*** Add File: first.txt", "+x"}, tt.patch...)
			res := patchCall(t, NewToolset(r), append(lines, "*** End Patch")...)
			if !res.IsError || !strings.HasPrefix(res.Output, "apply_patch changed nothing: ") {
				t.Fatalf("result %+v", res)
			}
			if !strings.Contains(res.Output, tt.want) {
				t.Errorf("output %q\nwant it to contain %q", res.Output, tt.want)
			}
			if after := treeState(t, root); after != before {
				t.Errorf("the tree changed:\n%s\n%s", before, after)
			}
		})
	}
}

// Every path is confined as write_file's: outside, absolute elsewhere,
// through a symlink leading out; the files outside stay as they are.
func TestApplyPatchConfinement(t *testing.T) {
	for _, p := range []string{"../outside/secret.txt", "link/secret.txt", "/etc/hostname", "sub/../../outside/secret.txt"} {
		for _, op := range []string{
			"*** Update File: " + p + "\n-secret needle\n+owned",
			"*** Delete File: " + p,
			"*** Add File: " + p + ".new\n+x",
			"*** Update File: in.txt\n*** Move to: " + p + ".moved\n-in\n+x",
		} {
			r, root, outside := newTree(t)
			writeFile(t, filepath.Join(root, "in.txt"), "in\n")
			symlink(t, outside, filepath.Join(root, "link"))
			before := treeState(t, filepath.Dir(root))
			res := patchCall(t, NewToolset(r), "*** Begin Patch", op, "*** End Patch")
			if !res.IsError || !strings.Contains(res.Output, "outside the workspace") {
				t.Errorf("%q: result %+v", op, res)
			}
			if after := treeState(t, filepath.Dir(root)); after != before {
				t.Errorf("%q changed the tree", op)
			}
		}
	}
}

// A file over the edit cap is refused, as edit_file refuses it.
func TestApplyPatchSizeCap(t *testing.T) {
	r, root, _ := newTree(t)
	big := strings.Repeat("x\n", maxEditSize/2+1)
	writeFile(t, filepath.Join(root, "big.txt"), big)
	res := patchCall(t, NewToolset(r), "*** Begin Patch", "*** Update File: big.txt", "-x", "+y", "*** End Patch")
	if !res.IsError || !strings.Contains(res.Output, "over the 8 MiB limit of apply_patch") {
		t.Fatalf("result %+v", res)
	}
}

// The preview shows every file's change without making it; the run then
// makes exactly that change.
func TestApplyPatchPreview(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "a.txt"), "a\n")
	ts := NewToolset(r)
	args := mustJSON(t, map[string]string{"input": "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Add File: b.txt\n+b\n*** End Patch"})
	p := preview(t, ts, "apply_patch", args)
	if p.Kind != "edit" || p.Title != "Patch 2 files" || p.As != "" || len(p.Files) != 2 || p.Diff != nil {
		t.Fatalf("preview %+v", p)
	}
	if f := p.Files[0]; f.Path != "a.txt" || f.Old != "a\n" || f.New != "A\n" || !strings.Contains(f.Unified, "-a\n+A\n") {
		t.Errorf("first file %+v", f)
	}
	if f := p.Files[1]; f.Path != "b.txt" || f.Old != "" || f.New != "b\n" || !strings.HasPrefix(f.Unified, "--- /dev/null\n") {
		t.Errorf("second file %+v", f)
	}
	if got := readBack(t, filepath.Join(root, "a.txt")); got != "a\n" {
		t.Fatalf("the preview wrote a.txt: %q", got)
	}
	res := call(t, ts, "apply_patch", args)
	if res.IsError || len(res.Files) != 2 || res.Files[0].New != p.Files[0].New || res.Files[1].New != p.Files[1].New {
		t.Fatalf("run %+v", res)
	}
}

// Through an editor, an updated file's new text goes to its buffer
// (computed from the buffer, unsaved changes included); an added file and a
// move's destination go to disk, since no buffer holds them yet.
func TestApplyPatchViaEditor(t *testing.T) {
	r, root, _ := newTree(t)
	a, m := filepath.Join(root, "a.txt"), filepath.Join(root, "m.txt")
	writeFile(t, a, "on disk\n")
	writeFile(t, m, "move me\n")
	ed := &fakeEditor{buffers: map[string]string{a: "unsaved\n", m: "move me\n"}}
	res := runVia(t, NewToolset(r), ed.both(), "apply_patch", mustJSON(t, map[string]string{"input": "*** Begin Patch\n" +
		"*** Update File: a.txt\n-unsaved\n+patched\n" +
		"*** Add File: n.txt\n+new\n" +
		"*** Update File: m.txt\n*** Move to: moved.txt\n-move me\n+moved\n" +
		"*** End Patch\n"}))
	if res.IsError {
		t.Fatal(res.Output)
	}
	if ed.buffers[a] != "patched\n" || readBack(t, a) != "on disk\n" {
		t.Errorf("buffer %q, disk %q", ed.buffers[a], readBack(t, a))
	}
	if !res.Buffer || !res.Files[0].Buffer || res.Files[1].Buffer || res.Files[2].Buffer || !strings.Contains(res.Output, "unsaved") {
		t.Errorf("result %+v", res)
	}
	if readBack(t, filepath.Join(root, "n.txt")) != "new\n" || readBack(t, filepath.Join(root, "moved.txt")) != "moved\n" {
		t.Error("the added file or the move's destination is not on disk")
	}
}

// The success text lists added, updated (a move under its new path) and
// deleted files in that order, whatever the patch's order, then the notes
// on the user's editor when its buffers took the writes.
func TestPatchSummary(t *testing.T) {
	add := &patch.Op{Kind: patch.OpAdd}
	upd := &patch.Op{Kind: patch.OpUpdate}
	del := &patch.Op{Kind: patch.OpDelete}
	files := []patchFile{
		{op: del, gone: &fileChange{shown: "old.txt"}},
		{op: upd, put: &fileChange{shown: "b/new.go", editor: true}, gone: &fileChange{shown: "a/old.go"}},
		{op: add, put: &fileChange{shown: "n.md", editor: true}},
		{op: upd, put: &fileChange{shown: "m.go"}},
	}
	want := "Success. Updated the following files:\nA n.md\nM b/new.go\nM m.go\nD old.txt\n" +
		"Updated files open in the user's editor changed there, unsaved: shell commands see the files on disk, which keep their old text until the user saves.\n" +
		"Added files were handed to the user's editor, which creates them: shell commands see them once the editor has saved them.\n"
	if got := patchSummary(files); got != want {
		t.Errorf("summary\n%s\nwant\n%s", got, want)
	}
}

// A bare @@ with no lines after it, which the reference grammar allows,
// changes nothing; the hunks before it apply.
func TestApplyPatchBareHeaderAtTheEnd(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "a.go"), "one\ntwo\n")
	res := patchCall(t, NewToolset(r), "*** Begin Patch", "*** Update File: a.go", "@@", "-one", "+1", "@@", "*** End Patch")
	if res.IsError || res.Output != "Success. Updated the following files:\nM a.go\n" {
		t.Fatalf("result %+v", res)
	}
	if got := readBack(t, filepath.Join(root, "a.go")); got != "1\ntwo\n" {
		t.Errorf("a.go = %q", got)
	}
}
