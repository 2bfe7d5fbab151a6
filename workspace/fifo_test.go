//go:build unix

package workspace

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hearthd/hearth/workspace/watch"
)

// TestFIFONeverBlocks puts a FIFO with no writer where the tools look: each
// must refuse it at once, never block in open(2) waiting for a writer.
func TestFIFONeverBlocks(t *testing.T) {
	r, root, _ := newTree(t)
	if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	writeFile(t, filepath.Join(root, "a.txt"), "needle\n")
	ts := NewToolset(r)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, c := range []struct{ tool, args, want string }{
			{"read_file", `{"path":"pipe"}`, "not a regular file"},
			{"write_file", `{"path":"pipe","content":"x"}`, "not a regular file"},
			{"grep", `{"pattern":"needle","path":"pipe"}`, "not a regular file"},
		} {
			if res := call(t, ts, c.tool, c.args); !res.IsError || !strings.Contains(res.Output, c.want) {
				t.Errorf("%s %s = %+v, want an error containing %q", c.tool, c.args, res, c.want)
			}
		}
		if res := call(t, ts, "grep", `{"pattern":"needle"}`); res.IsError || res.Output != "a.txt:1:needle\n" {
			t.Errorf("grep over a tree holding a FIFO = %+v", res)
		}
		if _, err := r.ReadFile("pipe"); err == nil {
			t.Error("ReadFile of a FIFO succeeded")
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a tool blocked on the FIFO")
	}
}

// A FIFO where the global excludes file should be neither blocks the
// watch.Ignorer nor adds rules.
func TestIgnorerGlobalExcludesFIFO(t *testing.T) {
	r, _, _ := newTree(t)
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	mkdir(t, filepath.Join(xdg, "git"))
	if err := syscall.Mkfifo(filepath.Join(xdg, "git", "ignore"), 0o600); err != nil {
		t.Fatal(err)
	}
	if watch.NewIgnorer(r, watch.DefaultIgnore).Ignored("x.bak", false) {
		t.Error("a FIFO's rules applied")
	}
}
