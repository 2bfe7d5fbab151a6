package safesocket

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// shortDir is a temporary directory with a path short enough for a socket
// (t.TempDir's can pass the system's limit).
func shortDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "hs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// The socket's directory is 0700 and the socket 0600; a second daemon is
// refused; a stale socket (nobody answers) is replaced.
func TestListenPermissionsSecondDaemonAndStaleSocket(t *testing.T) {
	path := filepath.Join(shortDir(t), "run", "hearth.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Dir(path)); fi.Mode().Perm() != 0o700 {
		t.Errorf("socket dir mode %v", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v", fi.Mode().Perm())
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if _, err := Listen(path); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("second Listen: %v, want ErrAlreadyRunning", err)
	}
	// Leave a stale socket behind: close the listener without unlinking.
	ln.(*lockedListener).Listener.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("stale socket not left behind: %v", err)
	}
	ln2, err := Listen(path)
	if err != nil {
		t.Fatalf("Listen over a stale socket: %v", err)
	}
	ln2.Close()
}

// A path that exists and is not a socket is never removed.
func TestListenRefusesNonSocket(t *testing.T) {
	path := filepath.Join(shortDir(t), "hearth.sock")
	os.WriteFile(path, []byte("precious"), 0o600)
	if _, err := Listen(path); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("Listen over a file: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "precious" {
		t.Fatal("the file was touched")
	}
}

// A directory hearth did not create keeps its mode: HEARTH_SOCKET=$HOME/x.sock
// must not turn $HOME 0700, nor /tmp. One that others can read or traverse
// (0755) is fine: the socket is 0600 and peers are checked by uid. One that
// others can write without the sticky bit is refused, with the fix, and left
// as it was; a sticky one (1777, like /tmp) is accepted.
func TestListenNeverChmodsDirectoryItDidNotCreate(t *testing.T) {
	cases := []struct {
		name   string
		mode   os.FileMode
		refuse string // substring of the error, "" = accepted
	}{
		{"home-like 0755", 0o755, ""},
		{"group-traversable 0750", 0o750, ""},
		{"private 0700", 0o700, ""},
		{"sticky world-writable 1777", 0o777 | os.ModeSticky, ""},
		{"world-writable 0777", 0o777, "chmod go-w"},
		{"group-writable 0770", 0o770, "chmod go-w"},
		{"world-writable 0703", 0o703, "chmod go-w"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(shortDir(t), "d")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, tc.mode); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "s.sock")
			ln, err := Listen(path)
			if tc.refuse == "" {
				if err != nil {
					t.Fatalf("Listen: %v", err)
				}
				ln.Close()
			} else {
				if err == nil {
					ln.Close()
					t.Fatalf("Listen in a %v directory succeeded", tc.mode)
				}
				if !strings.Contains(err.Error(), tc.refuse) || !strings.Contains(err.Error(), dir) {
					t.Errorf("error %q does not name %s and the fix %q", err, dir, tc.refuse)
				}
				if _, err := os.Lstat(path); err == nil {
					t.Error("a socket was created in a refused directory")
				}
			}
			fi, err := os.Stat(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode() & (os.ModePerm | os.ModeSticky); got != tc.mode {
				t.Errorf("directory mode %v after Listen, want %v untouched", got, tc.mode)
			}
		})
	}
}

// Directories hearth creates for the socket are 0700 whatever the umask
// left, parents included.
func TestListenCreatesPrivateDirectories(t *testing.T) {
	base := shortDir(t)
	path := filepath.Join(base, "a", "b", "s.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, dir := range []string{filepath.Join(base, "a"), filepath.Join(base, "a", "b")} {
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, %v; want 0700", dir, fi.Mode().Perm(), err)
		}
	}
}

// A directory or a stale socket owned by another user is refused, never
// taken over: another user who owns the directory can replace the socket.
func TestListenRefusesOtherUsersDirectoryAndSocket(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to chown a directory to another user")
	}
	const other = 54321
	t.Run("directory", func(t *testing.T) {
		dir := filepath.Join(shortDir(t), "d")
		os.Mkdir(dir, 0o755)
		if err := os.Chown(dir, other, other); err != nil {
			t.Fatal(err)
		}
		_, err := Listen(filepath.Join(dir, "s.sock"))
		if err == nil || !strings.Contains(err.Error(), "uid 54321") {
			t.Fatalf("Listen in another user's directory: %v", err)
		}
	})
	t.Run("stale socket", func(t *testing.T) {
		path := filepath.Join(shortDir(t), "s.sock")
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close()
		if err := os.Lchown(path, other, other); err != nil {
			t.Fatal(err)
		}
		_, err = Listen(path)
		if err == nil || !strings.Contains(err.Error(), "uid 54321") {
			t.Fatalf("Listen over another user's socket: %v", err)
		}
		if _, err := os.Lstat(path); err != nil {
			t.Errorf("the other user's socket was removed: %v", err)
		}
	})
}

// Two daemons started at once: the lock beside the socket lets one listen
// and refuses the other, which never unlinks the first one's socket.
func TestSocketLockRefusesSecondDaemon(t *testing.T) {
	dir, err := os.MkdirTemp("", "hl")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run", "hearth.sock")
	const n = 8
	results := make(chan error, n)
	lns := make(chan net.Listener, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ln, err := Listen(path)
			if err == nil {
				lns <- ln
			}
			results <- err
		}()
	}
	wg.Wait()
	close(results)
	close(lns)
	won := 0
	for err := range results {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, ErrAlreadyRunning):
			t.Errorf("a losing daemon failed with %v, want ErrAlreadyRunning", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d daemons listen on one socket", won)
	}
	ln := <-lns
	defer ln.Close()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("the winner's socket was unlinked: %v", err)
	}
	c.Close()
	fi, err := os.Stat(path + ".lock")
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("lock file: %v %v", fi, err)
	}
	ln.Close()
	if ln2, err := Listen(path); err != nil {
		t.Errorf("after the first daemon closed: %v", err)
	} else {
		ln2.Close()
	}
}
