package watch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testDir is the Dir of the watcher's tests: a directory and an *os.Root
// on it, as workspace.Root is (which the tests cannot import: it imports
// this package). Closed by Close.
type testDir struct {
	path string
	h    *os.Root
}

func openDir(dir string) (*testDir, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	h, err := os.OpenRoot(real)
	if err != nil {
		return nil, err
	}
	return &testDir{path: real, h: h}, nil
}

func (d *testDir) Close() error { return d.h.Close() }

func (d *testDir) Path() string { return d.path }

func (d *testDir) Rel(abs string) string {
	rel, err := filepath.Rel(d.path, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(rel)
}

// Resolve follows symlinks when the path exists; a path that does not is
// taken as it is.
func (d *testDir) Resolve(p string) (string, error) {
	abs := filepath.Join(d.path, filepath.FromSlash(p))
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return abs, nil
	}
	if err != nil {
		return "", err
	}
	if real != d.path && !strings.HasPrefix(real, d.path+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q is outside the workspace", p)
	}
	return real, nil
}

func (d *testDir) OpenRegular(name string) (*os.File, fs.FileInfo, error) {
	f, err := d.h.OpenFile(name, os.O_RDONLY|OpenNonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fi, &fs.PathError{Op: "open", Path: name, Err: errors.New("not a regular file")}
	}
	return f, fi, nil
}

// newTree creates, in a fresh temp dir, a workspace directory "root" and a
// sibling "outside" holding secret.txt, and opens the workspace. Both paths
// are returned with symlinks evaluated (macOS puts TempDir under a symlink).
func newTree(t testing.TB) (r *testDir, rootDir, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rootDir = filepath.Join(base, "root")
	outside = filepath.Join(base, "outside")
	mkdir(t, rootDir)
	writeFile(t, filepath.Join(outside, "secret.txt"), "secret needle\n")
	r, err = openDir(rootDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, rootDir, outside
}

func mkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// writeFile writes content to path, creating its parent directories.
func writeFile(t testing.TB, path, content string) {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// genTree writes files one-line files spread over top × leaf directories
// under a fresh directory and opens it.
func genTree(b *testing.B, top, leaf, files int) Dir {
	base, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for i := range top {
		for k := range leaf {
			dir := filepath.Join(base, fmt.Sprintf("d%03d", i), fmt.Sprintf("s%03d", k))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			for f := range files {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.go", f)), []byte("package x\n"), 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	r, err := openDir(base)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	return r
}
