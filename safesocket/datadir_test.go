//go:build unix

package safesocket

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A data directory is held by one lock at a time (flock is per open file
// description, so a second LockDataDir in one process is refused as
// another's would be); the refusal names the holder and what to do, and
// the directory is free again once the holder releases it.
func TestLockDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	first, err := LockDataDir(dir, "/run/h.sock", "")
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, DataDirLockName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("lock file: %v, %v; want 0600", fi, err)
	}
	_, err = LockDataDir(dir, "", "hearth ask --no-daemon")
	want := fmt.Sprintf("another hearth daemon (pid %d, socket /run/h.sock) uses the data directory %s", os.Getpid(), dir)
	if !errors.Is(err, ErrDataDirInUse) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "HEARTH_SOCKET=/run/h.sock hearth stop") {
		t.Fatalf("second lock: %v\nwant %q", err, want)
	}
	first.Release()

	second, err := LockDataDir(dir, "", "hearth ask --no-daemon")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	defer second.Release()
	_, err = LockDataDir(dir, "/run/h.sock", "")
	want = fmt.Sprintf("another hearth process (pid %d, hearth ask --no-daemon) uses the data directory %s", os.Getpid(), dir)
	if !errors.Is(err, ErrDataDirInUse) || !strings.Contains(err.Error(), want) {
		t.Fatalf("lock beside a command's: %v\nwant %q", err, want)
	}
}
