package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestAccess: a read-only command writes nowhere, the workspace's /tmp
// included, but reads and writes /dev/null; the mode's command writes the
// workspace and not beside it; an escalated one writes beside it too, and
// still neither reads nor writes hearth's directories.
func TestAccess(t *testing.T) {
	if abi, why := landlockABI(); abi == 0 {
		t.Skipf("no Landlock here: %s", why)
	}
	base := hostDir(t) // outside /tmp, which commands see a private copy of
	ws, outside, data, tmp := filepath.Join(base, "ws"), filepath.Join(base, "outside"), filepath.Join(base, "data"), filepath.Join(base, "tmp")
	writeFile(t, filepath.Join(ws, "in.txt"), "workspace content\n")
	writeFile(t, filepath.Join(data, "hearth.db"), "database-secret\n")
	mkdir(t, outside)
	mkdir(t, tmp)
	t.Setenv("TMPDIR", tmp)
	removePrivateTmp(t, ws)
	useSandbox(t, data)

	run := func(a Access, line string) bool {
		t.Helper()
		o := Run(context.Background(), Command{Root: ws, Dir: ws, Line: line, Access: a, Timeout: 30 * time.Second})
		if o.Err != nil {
			t.Fatalf("%s %q: %v", a, line, o.Err)
		}
		return o.ExitCode == 0
	}
	for _, c := range []struct {
		access Access
		line   string
		ok     bool
	}{
		{AccessReadOnly, "cat in.txt && ls / >/dev/null 2>&1", true},
		{AccessReadOnly, "echo x > new.txt", false},
		{AccessReadOnly, "echo x > /tmp/t", false},
		{AccessReadOnly, "echo x > \"$TMPDIR/t\"", false},
		{AccessReadOnly, "rm in.txt", false},
		{AccessWorkspace, "echo x > new.txt && echo x > /tmp/t", true},
		{AccessWorkspace, "echo x > " + outside + "/f", false},
		{AccessEscalated, "echo x > " + outside + "/f", true},
		{AccessEscalated, "cat " + data + "/hearth.db", false},
		{AccessEscalated, "echo x > " + data + "/hearth.db", false},
	} {
		if got := run(c.access, c.line); got != c.ok {
			t.Errorf("%s %q: succeeded %v, want %v", c.access, c.line, got, c.ok)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "in.txt")); err != nil {
		t.Errorf("a read-only command removed a file: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(data, "hearth.db")); string(b) != "database-secret\n" {
		t.Errorf("an escalated command changed hearth's database: %q", b)
	}
}
