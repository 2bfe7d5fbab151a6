package workspace

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// writes records the calls of Toolset.OnWrite.
type writes struct {
	mu    sync.Mutex
	calls []string // "rel=content"
}

func (w *writes) record(rel string, content []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, rel+"="+string(content))
}

func (w *writes) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.calls)
}

// recordingToolset is a Toolset on r whose OnWrite calls are recorded.
func recordingToolset(r *Root) (*Toolset, *writes) {
	w := &writes{}
	ts := NewToolset(r)
	ts.OnWrite = w.record
	return ts, w
}

func readString(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// assertNoTemp fails if any writeAtomic temporary file is left under dir.
func assertNoTemp(t testing.TB, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), tempPrefix) {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}

// newFileMode is the mode a new file gets from the process's umask.
func newFileMode(t testing.TB) fs.FileMode {
	t.Helper()
	p := filepath.Join(t.TempDir(), "probe")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestWriteFileCreates(t *testing.T) {
	r, root, _ := newTree(t)
	ts, w := recordingToolset(r)
	content := "hello\nworld\n"
	res := call(t, ts, "write_file", mustJSON(t, map[string]string{"path": "a/b/c.txt", "content": content}))
	if res.IsError || res.Output != "Created a/b/c.txt (2 lines, 12 bytes)." {
		t.Fatalf("write_file = %+v", res)
	}
	if res.Title != "Write a/b/c.txt" || !slices.Equal(res.Locations, []string{"a/b/c.txt"}) || res.Hash != sha(content) {
		t.Errorf("Title %q, Locations %v, Hash %s", res.Title, res.Locations, res.Hash)
	}
	wantDiff := "--- /dev/null\n+++ b/a/b/c.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n"
	if d := res.Diff; d == nil || d.Path != "a/b/c.txt" || d.Old != "" || d.New != content || d.Unified != wantDiff {
		t.Errorf("Diff = %+v, want Unified %q", d, wantDiff)
	}
	abs := filepath.Join(root, "a", "b", "c.txt")
	if got := readString(t, abs); got != content {
		t.Errorf("file holds %q", got)
	}
	fi, _ := os.Stat(abs)
	if want := newFileMode(t); fi.Mode().Perm() != want {
		t.Errorf("new file mode %v, want %v (0666 less the umask)", fi.Mode().Perm(), want)
	}
	if got := w.list(); !slices.Equal(got, []string{"a/b/c.txt=" + content}) {
		t.Errorf("OnWrite calls = %q", got)
	}
	assertNoTemp(t, root)

	// An empty file, by absolute path.
	res = call(t, ts, "write_file", mustJSON(t, map[string]string{"path": filepath.Join(root, "empty"), "content": ""}))
	if res.IsError || res.Output != "Created empty (0 lines, 0 bytes)." || readString(t, filepath.Join(root, "empty")) != "" {
		t.Errorf("write_file of an empty file = %+v", res)
	}
}

func TestWriteFileOverwriteKeepsMode(t *testing.T) {
	r, root, _ := newTree(t)
	abs := filepath.Join(root, "run.sh")
	writeFile(t, abs, "#!/bin/sh\necho old\n")
	if err := os.Chmod(abs, 0o750); err != nil {
		t.Fatal(err)
	}
	ts, w := recordingToolset(r)
	content := "#!/bin/sh\necho new\n"
	res := call(t, ts, "write_file", mustJSON(t, map[string]string{"path": "run.sh", "content": content}))
	if res.IsError || res.Output != "Wrote run.sh (2 lines, 19 bytes)." || res.Hash != sha(content) {
		t.Fatalf("write_file = %+v", res)
	}
	wantDiff := "--- a/run.sh\n+++ b/run.sh\n@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo old\n+echo new\n"
	if d := res.Diff; d == nil || d.Old != "#!/bin/sh\necho old\n" || d.New != content || d.Unified != wantDiff {
		t.Errorf("Diff = %+v, want Unified %q", d, wantDiff)
	}
	fi, err := os.Stat(abs)
	if err != nil || fi.Mode() != 0o750 {
		t.Errorf("mode after write = %v, %v; want -rwxr-x---", fi.Mode(), err)
	}
	if got := readString(t, abs); got != content {
		t.Errorf("file holds %q", got)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 {
		t.Errorf("root holds %d entries after the write, want only run.sh", len(entries))
	}

	// Writing the same content again succeeds and says so.
	res = call(t, ts, "write_file", mustJSON(t, map[string]string{"path": "run.sh", "content": content}))
	if res.IsError || !strings.Contains(res.Output, "the content is unchanged") || res.Diff == nil || res.Diff.Unified != "" {
		t.Errorf("write_file of the same content = %+v", res)
	}
	if n := len(w.list()); n != 2 {
		t.Errorf("OnWrite called %d times, want 2", n)
	}
}

func TestWriteFileThroughSymlinksInside(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "real", "target.txt"), "old\n")
	symlink(t, "real/target.txt", filepath.Join(root, "link.txt"))
	symlink(t, "real", filepath.Join(root, "dirlink"))
	symlink(t, "real/later.txt", filepath.Join(root, "dangling.txt"))
	ts, w := recordingToolset(r)

	for _, tt := range []struct{ path, rel, file string }{
		{"link.txt", "real/target.txt", "target.txt"},
		{"dirlink/new.txt", "real/new.txt", "new.txt"},
		{"dangling.txt", "real/later.txt", "later.txt"},
	} {
		res := call(t, ts, "write_file", mustJSON(t, map[string]string{"path": tt.path, "content": tt.path}))
		if res.IsError || res.Title != "Write "+tt.rel || !slices.Equal(res.Locations, []string{tt.rel}) {
			t.Errorf("write_file %s = %+v, want it written to %s", tt.path, res, tt.rel)
			continue
		}
		if got := readString(t, filepath.Join(root, "real", tt.file)); got != tt.path {
			t.Errorf("write_file %s: %s holds %q", tt.path, tt.rel, got)
		}
	}
	// The links are still links: the write went through them, not over them.
	for _, l := range []string{"link.txt", "dirlink", "dangling.txt"} {
		if fi, err := os.Lstat(filepath.Join(root, l)); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s is no longer a symlink", l)
		}
	}
	if got := w.list(); len(got) != 3 || got[0] != "real/target.txt=link.txt" {
		t.Errorf("OnWrite calls = %q, want the resolved paths", got)
	}
	assertNoTemp(t, root)
}

// TestWriteRefusesOutside tries every way out of the root, for write_file
// and edit_file, and checks that nothing outside changed or appeared.
func TestWriteRefusesOutside(t *testing.T) {
	r, root, outside := newTree(t)
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, "leak"))
	symlink(t, outside, filepath.Join(root, "outdir"))
	symlink(t, filepath.Join(outside, "nothere.txt"), filepath.Join(root, "dangling"))
	symlink(t, "../outside/newdir", filepath.Join(root, "danglingdir"))
	symlink(t, "../../outside", filepath.Join(root, "sub", "up"))
	ts, w := recordingToolset(r)
	paths := []string{
		"../outside/secret.txt",
		"../outside/new.txt",
		"sub/../../outside/new.txt",
		filepath.Join(outside, "secret.txt"),
		filepath.Join(outside, "new.txt"),
		"leak",
		"outdir/secret.txt",
		"outdir/new.txt",
		"outdir/deep/new.txt",
		"dangling",
		"danglingdir/new.txt",
		"sub/up/new.txt",
	}
	for _, p := range paths {
		for _, tool := range []string{"write_file", "edit_file"} {
			args := map[string]any{"path": p, "content": "pwned\n"}
			if tool == "edit_file" {
				args = map[string]any{"path": p, "old_string": "secret", "new_string": "pwned"}
			}
			res := call(t, ts, tool, mustJSON(t, args))
			if !res.IsError || !strings.Contains(res.Output, "outside the workspace") {
				t.Errorf("%s %s = %+v, want an error saying it is outside the workspace", tool, p, res)
			}
		}
	}
	if got := readString(t, filepath.Join(outside, "secret.txt")); got != "secret needle\n" {
		t.Errorf("secret.txt changed to %q", got)
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Errorf("outside holds %d entries, want only secret.txt", len(entries))
	}
	if got := w.list(); len(got) != 0 {
		t.Errorf("OnWrite called for refused writes: %q", got)
	}
	assertNoTemp(t, filepath.Dir(root))
}

func TestWriteFileErrors(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "a.txt"), "a\n")
	mkdir(t, filepath.Join(root, "dir"))
	writeFile(t, filepath.Join(root, "big.bin"), "")
	if err := os.Truncate(filepath.Join(root, "big.bin"), maxEditSize+1); err != nil {
		t.Fatal(err)
	}
	ts := NewToolset(r)
	tests := []struct{ path, want string }{
		{".", `path "." is the workspace root directory`},
		{"", `path "" is the workspace root directory`},
		{"dir", `"dir" is a directory, not a file`},
		{"a.txt/b.txt", `cannot write "a.txt/b.txt": part of the path is a file, not a directory`},
		{"big.bin", `"big.bin" is 8388609 bytes, over the 8 MiB limit of write_file; use shell`},
	}
	for _, tt := range tests {
		res := call(t, ts, "write_file", mustJSON(t, map[string]string{"path": tt.path, "content": "x"}))
		if !res.IsError || !strings.Contains(res.Output, tt.want) {
			t.Errorf("write_file %q = %+v, want an error containing %q", tt.path, res, tt.want)
		}
	}
	if got := readString(t, filepath.Join(root, "a.txt")); got != "a\n" {
		t.Errorf("a.txt changed to %q", got)
	}
	assertNoTemp(t, root)
}

// TestWriteAtomicFailureCleansUp makes the final rename fail (the
// destination is a non-empty directory) and checks the destination is
// untouched and the temporary file gone.
func TestWriteAtomicFailureCleansUp(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	writeFile(t, filepath.Join(dir, "dest", "inside.txt"), "keep\n")
	if err := writeAtomic(root, "dest", []byte("new"), 0, false); err == nil {
		t.Fatal("writeAtomic over a non-empty directory succeeded")
	}
	if got := readString(t, filepath.Join(dir, "dest", "inside.txt")); got != "keep\n" {
		t.Errorf("destination changed: %q", got)
	}
	assertNoTemp(t, dir)
	if err := writeAtomic(root, filepath.Join("missing", "f"), []byte("new"), 0, false); err == nil {
		t.Error("writeAtomic into a missing directory succeeded")
	}
}

// TestWriteFileBinaryDiff overwrites a binary file: allowed, and the diff
// says only that it differs.
func TestWriteFileBinaryDiff(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "img.png"), "PNG\x00\x01")
	res := call(t, NewToolset(r), "write_file", `{"path":"img.png","content":"text\n"}`)
	if res.IsError || res.Diff == nil || res.Diff.Unified != "Binary files a/img.png and b/img.png differ\n" {
		t.Errorf("write_file over a binary file = %+v", res)
	}
	if !bytes.Equal([]byte(readString(t, filepath.Join(root, "img.png"))), []byte("text\n")) {
		t.Error("binary file not replaced")
	}
}
