package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The log rotates past its cap, keeps one old file, and is private.
func TestLogFileRotates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hearth.log")
	l, err := OpenLogFile(path, 100)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	line := strings.Repeat("x", 39) + "\n"
	for i := 0; i < 7; i++ {
		if _, err := l.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	cur, _ := os.ReadFile(path)
	old, _ := os.ReadFile(path + ".1")
	if len(cur) > 100 || len(old) > 100 || len(cur)+len(old) != 3*40 {
		// 7 lines of 40 bytes: rotations after lines 2, 4, 6 leave 1 line
		// in the current file and 2 in the old one.
		t.Fatalf("current %d bytes, old %d bytes", len(cur), len(old))
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("log mode %v", fi.Mode().Perm())
	}
}
