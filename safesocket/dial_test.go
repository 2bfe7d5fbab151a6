package safesocket

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A client connects only to a socket that is safely the user's own, and
// says what to fix otherwise; a missing socket is "not running", not unsafe.
func TestDialSocketRefusesUnsafeSockets(t *testing.T) {
	listen := func(t *testing.T, dir string) string {
		t.Helper()
		path := filepath.Join(dir, "s.sock")
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		if err := os.Chmod(path, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	private := func(t *testing.T) string {
		t.Helper()
		dir := filepath.Join(shortDir(t), "d")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	ctx := context.Background()

	t.Run("safe", func(t *testing.T) {
		c, err := Dial(ctx, listen(t, private(t)))
		if err != nil {
			t.Fatalf("Dial on a 0600 socket in a 0700 directory: %v", err)
		}
		c.Close()
	})
	t.Run("missing", func(t *testing.T) {
		_, err := Dial(ctx, filepath.Join(private(t), "s.sock"))
		if !errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrUnsafe) {
			t.Fatalf("Dial on no socket: %v; want not-exist, not unsafe", err)
		}
	})
	for _, tc := range []struct {
		name, fix string
		setup     func(t *testing.T) string
	}{
		{"socket others can connect to", "chmod 600", func(t *testing.T) string {
			path := listen(t, private(t))
			os.Chmod(path, 0o666)
			return path
		}},
		{"socket the group can connect to", "chmod 600", func(t *testing.T) string {
			path := listen(t, private(t))
			os.Chmod(path, 0o660)
			return path
		}},
		{"directory others can write", "chmod go-w", func(t *testing.T) string {
			dir := private(t)
			path := listen(t, dir)
			os.Chmod(dir, 0o777)
			return path
		}},
		{"not a socket", "not a socket", func(t *testing.T) string {
			path := filepath.Join(private(t), "s.sock")
			os.WriteFile(path, nil, 0o600)
			return path
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.setup(t)
			c, err := Dial(ctx, path)
			if err == nil {
				c.Close()
				t.Fatal("Dial connected")
			}
			if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), tc.fix) || !strings.Contains(err.Error(), filepath.Dir(path)) {
				t.Fatalf("error %q: want ErrUnsafe naming the path and the fix %q", err, tc.fix)
			}
		})
	}
	t.Run("another user's socket", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("needs root to chown a socket to another user")
		}
		path := listen(t, private(t))
		if err := os.Lchown(path, 54321, 54321); err != nil {
			t.Fatal(err)
		}
		_, err := Dial(ctx, path)
		if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "uid 54321") {
			t.Fatalf("Dial on another user's socket: %v", err)
		}
	})
}
