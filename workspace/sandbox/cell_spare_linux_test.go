//go:build linux && cgo

package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCellSpareFollowsTheRules: the init a cell makes ahead of a command
// is confined by the rules as they were then; a granted directory made
// after it (a build cache the first build creates) is writable by the
// next command all the same, and a command after that still runs.
func TestCellSpareFollowsTheRules(t *testing.T) {
	r, _, _ := newTree(t)
	outside, err := os.MkdirTemp("/var/tmp", "hearth-spare-") // the cell's /tmp is private
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(outside, "cache")
	Set(Config{Helper: []string{exe, sandboxSubcommand}, Write: []string{cache}})
	t.Cleanup(func() { Set(Config{}) })
	ts := newShellTool(r)
	if res := runShell(t, ts, "true", 10_000); res.IsError {
		t.Fatalf("first command: %s", res.Output) // the cell is up, a spare made under the old rules
	}
	mkdir(t, cache)
	for i, line := range []string{"echo hi > " + filepath.Join(cache, "a"), "cat " + filepath.Join(cache, "a")} {
		if res := runShell(t, ts, line, 10_000); res.IsError {
			t.Fatalf("command %d (%s): %s", i, line, res.Output)
		}
	}
}
