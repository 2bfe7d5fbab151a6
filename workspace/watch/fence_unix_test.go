//go:build unix

package watch

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestKilledWatchersMarkersSwept: a Watcher removes the marker directories
// that killed processes left where it makes its own (a daemon SIGKILLed has
// no chance to), and leaves those of live processes and anything else.
func TestKilledWatchersMarkersSwept(t *testing.T) {
	base := t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := strconv.Itoa(gone.Process.Pid) // reaped: no process has it now
	parent := strconv.Itoa(os.Getppid())   // alive while the test runs
	names := map[string]bool{              // name → swept
		fencePrefix + dead + "-123":   true,
		fencePrefix + "1009423072":    true, // an older hearth's: no such pid
		fencePrefix + parent + "-456": false,
		fencePrefix + "notapid":       false,
		"someone-elses":               false,
	}
	for n := range names {
		if err := os.Mkdir(filepath.Join(base, n), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	r, _, _ := newTree(t)
	w, err := New(r, Options{FenceDir: base, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	mine := w.fenceDir
	defer func() {
		w.Close()
		if _, err := os.Stat(mine); !os.IsNotExist(err) {
			t.Errorf("the watcher's own marker directory outlived it: %v", err)
		}
	}()
	if filepath.Dir(mine) != base || filepath.Base(mine)[:len(fencePrefix)+len(strconv.Itoa(os.Getpid()))+1] != fencePrefix+strconv.Itoa(os.Getpid())+"-" {
		t.Errorf("marker directory %s, want %s%d-… in %s", mine, fencePrefix, os.Getpid(), base)
	}
	for n, swept := range names {
		_, err := os.Stat(filepath.Join(base, n))
		if gone := os.IsNotExist(err); gone != swept {
			t.Errorf("%s: removed %v, want %v", n, gone, swept)
		}
	}
}
