package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	r, root, outside := newTree(t)
	writeFile(t, filepath.Join(root, "a.txt"), "a\n")
	writeFile(t, filepath.Join(root, "sub", "x.txt"), "x\n")
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, "linkfile"))
	symlink(t, outside, filepath.Join(root, "linkdir"))
	symlink(t, "../../outside", filepath.Join(root, "sub", "inner"))
	symlink(t, filepath.Join(outside, "nope"), filepath.Join(root, "dangle"))
	symlink(t, "../outside/nope/deeper", filepath.Join(root, "dangle-rel"))
	symlink(t, "newfile.txt", filepath.Join(root, "dangle-in"))
	symlink(t, "sub", filepath.Join(root, "inlink"))
	symlink(t, "loop", filepath.Join(root, "loop"))
	// A link whose target climbs out and back in is fine: only the
	// destination counts.
	symlink(t, "../root/a.txt", filepath.Join(root, "roundtrip"))
	alias := filepath.Join(filepath.Dir(root), "alias")
	symlink(t, root, alias)

	tests := []struct {
		name    string
		in      string
		want    string // relative to root, slash-separated; "" when an error is wanted
		outside bool   // the error must wrap ErrOutside
	}{
		{"empty is root", "", ".", false},
		{"dot is root", ".", ".", false},
		{"plain file", "a.txt", "a.txt", false},
		{"dot slash", "./sub/x.txt", "sub/x.txt", false},
		{"inner dotdot", "sub/../a.txt", "a.txt", false},
		{"dotdot", "..", "", true},
		{"dotdot escape", "../outside/secret.txt", "", true},
		{"hidden escape", "a/../../b", "", true},
		{"absolute inside", filepath.Join(root, "sub", "x.txt"), "sub/x.txt", false},
		{"absolute root", root, ".", false},
		{"absolute outside", filepath.Join(outside, "secret.txt"), "", true},
		{"absolute system", "/etc/passwd", "", true},
		{"absolute via alias of root", filepath.Join(alias, "a.txt"), "a.txt", false},
		{"absolute dotdot out", filepath.Join(root, "..", "outside"), "", true},
		{"symlink file out", "linkfile", "", true},
		{"symlink dir out", "linkdir", "", true},
		{"through symlink dir out", "linkdir/secret.txt", "", true},
		{"symlink at intermediate component", "sub/inner/secret.txt", "", true},
		{"dangling symlink out", "dangle", "", true},
		{"dangling relative symlink out", "dangle-rel", "", true},
		{"dangling symlink in", "dangle-in", "newfile.txt", false},
		{"symlink inside", "inlink/x.txt", "sub/x.txt", false},
		{"symlink round trip", "roundtrip", "a.txt", false},
		{"non-existent inside", "new/dir/file.txt", "new/dir/file.txt", false},
		{"under a file", "a.txt/child", "a.txt/child", false},
		{"symlink loop", "loop", "", false},
		{"nul byte", "a\x00b", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Resolve(tt.in)
			if tt.want != "" {
				if err != nil {
					t.Fatalf("Resolve(%q): %v", tt.in, err)
				}
				if want := filepath.Join(root, filepath.FromSlash(tt.want)); got != want {
					t.Fatalf("Resolve(%q) = %q, want %q", tt.in, got, want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Resolve(%q) = %q, want an error", tt.in, got)
			}
			var pe *PathError
			if !errors.As(err, &pe) {
				t.Fatalf("Resolve(%q) error %T, want *PathError", tt.in, err)
			}
			if pe.Path != tt.in || !strings.Contains(err.Error(), "path ") {
				t.Errorf("error %q does not name the path %q", err, tt.in)
			}
			if got := errors.Is(err, ErrOutside); got != tt.outside {
				t.Errorf("errors.Is(%q, ErrOutside) = %v, want %v", err, got, tt.outside)
			}
			if tt.outside && !strings.Contains(err.Error(), "outside the workspace") {
				t.Errorf("error %q does not say the path is outside the workspace", err)
			}
		})
	}
}

func TestResolveMessages(t *testing.T) {
	r, root, outside := newTree(t)
	symlink(t, outside, filepath.Join(root, "linkdir"))
	_, err := r.Resolve("../x")
	if want := `path "../x" is outside the workspace; use a path relative to the workspace root`; err == nil || err.Error() != want {
		t.Errorf("Resolve(../x) error = %v, want %q", err, want)
	}
	_, err = r.Resolve("linkdir/secret.txt")
	if err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("Resolve through an outside symlink: error %v should mention the symlink", err)
	}
}

func TestOpen(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(base, "real")
	mkdir(t, real)
	alias := filepath.Join(base, "alias")
	symlink(t, real, alias)
	file := filepath.Join(base, "file")
	writeFile(t, file, "x")

	for _, dir := range []string{real, real + string(filepath.Separator), alias, filepath.Join(alias, ".")} {
		r, err := Open(dir)
		if err != nil {
			t.Fatalf("Open(%q): %v", dir, err)
		}
		if r.Path() != real {
			t.Errorf("Open(%q).Path() = %q, want %q", dir, r.Path(), real)
		}
	}
	for _, dir := range []string{"relative/dir", "", filepath.Join(base, "missing"), file} {
		if _, err := Open(dir); err == nil {
			t.Errorf("Open(%q) succeeded, want an error", dir)
		}
	}
}

func TestRel(t *testing.T) {
	r, root, outside := newTree(t)
	for abs, want := range map[string]string{
		root:                                 ".",
		filepath.Join(root, "a.txt"):         "a.txt",
		filepath.Join(root, "src", "x", "y"): "src/x/y",
		filepath.Join(outside, "secret.txt"): filepath.ToSlash(filepath.Join(outside, "secret.txt")),
	} {
		if got := r.Rel(abs); got != want {
			t.Errorf("Rel(%q) = %q, want %q", abs, got, want)
		}
	}
}

func TestRootIsNotFooledByPrefix(t *testing.T) {
	// "/x/root2" starts with "/x/root" but is not inside it.
	r, root, _ := newTree(t)
	sibling := root + "2"
	mkdir(t, sibling)
	if _, err := r.Resolve(sibling); !errors.Is(err, ErrOutside) {
		t.Errorf("Resolve(%q) error = %v, want ErrOutside", sibling, err)
	}
	if err := os.Symlink(sibling, filepath.Join(root, "sib")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Resolve("sib"); !errors.Is(err, ErrOutside) {
		t.Errorf("Resolve(sib) error = %v, want ErrOutside", err)
	}
}

// TestEscapedKnowsOsRoot pins escaped to the error os.Root gives for a name
// leading out of it (its value is not exported, so it is known by message).
func TestEscapedKnowsOsRoot(t *testing.T) {
	r, root, outside := newTree(t)
	symlink(t, outside, filepath.Join(root, "out"))
	for _, name := range []string{"../outside/secret.txt", "out/secret.txt"} {
		_, err := r.handle().Open(name)
		if !escaped(err) {
			t.Errorf("os.Root.Open(%q) error %v: escaped says false", name, err)
		}
	}
	if _, err := r.handle().Open("missing"); err == nil || escaped(err) {
		t.Errorf("os.Root.Open(missing) error %v: escaped says true", err)
	}
}

// TestRootReadFile reads through the handle: files inside, through links
// inside; refused outside, as Resolve refuses.
func TestRootReadFile(t *testing.T) {
	r, root, outside := newTree(t)
	writeFile(t, filepath.Join(root, "sub", "a.txt"), "a\n")
	symlink(t, "sub/a.txt", filepath.Join(root, "alias"))
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, "leak"))
	for _, p := range []string{"sub/a.txt", "alias", filepath.Join(root, "sub", "a.txt")} {
		if b, err := r.ReadFile(p); err != nil || string(b) != "a\n" {
			t.Errorf("ReadFile(%q) = %q, %v", p, b, err)
		}
	}
	for _, p := range []string{"leak", "../outside/secret.txt", filepath.Join(outside, "secret.txt")} {
		if b, err := r.ReadFile(p); !errors.Is(err, ErrOutside) {
			t.Errorf("ReadFile(%q) = %q, %v; want ErrOutside", p, b, err)
		}
	}
	if _, err := r.ReadFile("sub"); !errors.Is(err, errNotRegular) {
		t.Errorf("ReadFile of a directory: %v, want errNotRegular", err)
	}
	if _, err := r.ReadFile("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile of a missing file: %v, want ErrNotExist", err)
	}
}

// TestRootRecreatedAndClosed removes the workspace directory and creates it
// again: the tools follow the path to the new directory, as they did when
// they opened files by name. After Close they fail.
func TestRootRecreatedAndClosed(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "old.txt"), "old\n")
	ts := NewToolset(r)
	if res := call(t, ts, "read_file", `{"path":"old.txt"}`); res.IsError {
		t.Fatalf("read_file before: %+v", res)
	}
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	if res := call(t, ts, "read_file", `{"path":"old.txt"}`); !res.IsError || !strings.Contains(res.Output, "does not exist") {
		t.Errorf("read_file with the root removed = %+v, want does not exist", res)
	}
	writeFile(t, filepath.Join(root, "new.txt"), "new\n")
	if res := call(t, ts, "read_file", `{"path":"new.txt"}`); res.IsError || !strings.Contains(res.Output, "new") {
		t.Errorf("read_file in the recreated root = %+v", res)
	}
	if res := call(t, ts, "write_file", `{"path":"d/w.txt","content":"w\n"}`); res.IsError || readString(t, filepath.Join(root, "d", "w.txt")) != "w\n" {
		t.Errorf("write_file in the recreated root = %+v", res)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if res := call(t, ts, "read_file", `{"path":"new.txt"}`); !res.IsError || !strings.Contains(res.Output, "closed") {
		t.Errorf("read_file after Close = %+v, want an error saying the root is closed", res)
	}
	if _, err := r.ReadFile("new.txt"); !errors.Is(err, os.ErrClosed) {
		t.Errorf("ReadFile after Close: %v, want os.ErrClosed", err)
	}
}
