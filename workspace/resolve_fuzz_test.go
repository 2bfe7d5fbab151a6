package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzSecret is the content of the one file outside the fuzzed workspace.
const fuzzSecret = "FUZZ-OUTSIDE-SECRET"

// FuzzResolve checks confinement for any path a model could send: Resolve
// either refuses it with a *PathError or returns a path beneath the root
// that the root's handle accepts, whose existing part really is beneath the
// root on disk; and ReadFile never returns the file outside. The tree holds
// the ways out: "..", absolute paths, symlinks out (absolute, relative, at
// an intermediate component, dangling), loops, and links that stay in.
//
//	go test ./workspace -run '^$' -fuzz FuzzResolve -fuzztime 1m
//
// Seeds: below, and testdata/fuzz/FuzzResolve.
func FuzzResolve(f *testing.F) {
	base, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	for p, content := range map[string]string{
		filepath.Join(outside, "secret.txt"): fuzzSecret,
		filepath.Join(root, "a.txt"):         "a",
		filepath.Join(root, "sub", "x.txt"):  "x",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"out":          outside,
		"outrel":       "../outside",
		"leak":         filepath.Join(outside, "secret.txt"),
		"sub/up":       "../../outside",
		"sub/self":     "..",
		"dangle":       "../outside/nope",
		"in":           "sub",
		"inabs":        filepath.Join(root, "sub"),
		"roundtrip":    "../root/a.txt",
		"loop":         "loop",
		"sub/deeplink": "../in/../out",
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

	for _, seed := range []string{
		"", ".", "a.txt", "sub/x.txt", "..", "../outside/secret.txt", "out/secret.txt", "outrel/secret.txt",
		"leak", "sub/up/secret.txt", "sub/self/../outside/secret.txt", "dangle", "in/x.txt", "inabs/x.txt",
		"roundtrip", "loop", "sub/deeplink/secret.txt", "/etc/passwd", root + "/a.txt", outside + "/secret.txt",
		root + "/../outside/secret.txt", "a.txt/..", "sub//./../a.txt", "new/dir/f.txt", "a\x00b",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, p string) {
		abs, err := r.Resolve(p)
		if err != nil {
			var pe *PathError
			if !errors.As(err, &pe) || pe.Path != p {
				t.Fatalf("Resolve(%q) error %T %v, want a *PathError naming the path", p, err, err)
			}
		} else {
			if !r.contains(abs) || abs != filepath.Clean(abs) {
				t.Fatalf("Resolve(%q) = %q, not beneath %s", p, abs, root)
			}
			name := r.name(abs)
			if _, err := r.handle().Lstat(name); escaped(err) {
				t.Fatalf("Resolve(%q) = %q, which the handle refuses as outside: %v", p, abs, err)
			}
			// The part that exists is beneath the root on disk too.
			existing := abs
			for {
				if _, err := os.Lstat(existing); err == nil {
					break
				}
				existing = filepath.Dir(existing)
			}
			real, err := filepath.EvalSymlinks(existing)
			if err == nil && !r.contains(real) {
				t.Fatalf("Resolve(%q) = %q, whose existing part %s is really %s, outside", p, abs, existing, real)
			}
		}
		b, err := r.ReadFile(p)
		if err == nil && strings.Contains(string(b), fuzzSecret) {
			t.Fatalf("ReadFile(%q) returned the file outside the workspace", p)
		}
		if err == nil && abs == "" {
			t.Fatalf("ReadFile(%q) succeeded where Resolve refused", p)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errNotRegular) {
			var pe *PathError
			if !errors.As(err, &pe) && !isPlainFSError(err) {
				t.Fatalf("ReadFile(%q) error %T %v", p, err, err)
			}
		}
	})
}

// isPlainFSError reports the errors a read may meet beneath the root that
// are not about confinement (a component that is a file, a name too long).
func isPlainFSError(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && !escaped(err)
}
