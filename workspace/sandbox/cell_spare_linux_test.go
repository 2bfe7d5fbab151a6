//go:build linux && cgo

package sandbox

import (
	"fmt"
	gonet "net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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
	c := awaitHandedSpare(t) // and handed to the daemon
	mkdir(t, cache)
	for i, line := range []string{"echo hi > " + filepath.Join(cache, "a"), "cat " + filepath.Join(cache, "a")} {
		if res := runShell(t, ts, line, 10_000); res.IsError {
			t.Fatalf("command %d (%s): %s", i, line, res.Output)
		}
	}
	if c.retried.Load() == 0 {
		t.Error("the spare made under the old rules ran the command")
	}
}

// awaitHandedSpare waits until the workspace's one running cell holds a
// spare the server handed over, and returns the cell.
func awaitHandedSpare(t *testing.T) *cell {
	t.Helper()
	cells.mu.Lock()
	var c *cell
	for _, x := range cells.m {
		c = x
	}
	n := len(cells.m)
	cells.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d cells running, want 1", n)
	}
	deadline := time.After(10 * time.Second)
	for {
		c.mu.Lock()
		held := c.spare != nil
		c.mu.Unlock()
		if held {
			return c
		}
		select {
		case <-c.spareCame:
		case <-deadline:
			t.Fatal("the cell was handed no spare in 10s")
		}
	}
}

// TestCellCommandThroughHandedSpare: the daemon sends a command straight
// to the spare the server handed it, and the command runs with its
// arguments, environment, directory and output as it would the full way.
func TestCellCommandThroughHandedSpare(t *testing.T) {
	r, _, _ := newTree(t)
	useSandbox(t)
	ts := newShellTool(r)
	if res := runShell(t, ts, "true", 0); res.IsError {
		t.Fatalf("the first command: %q", res.Output)
	}
	for i := range 3 {
		c := awaitHandedSpare(t)
		before := c.handed.Load()
		res := runShell(t, ts, `printf '%s|%s|' "$PWD" 'two words'; echo "$HOME" | wc -c; exit 3`, 0)
		if c.handed.Load() != before+1 {
			t.Fatalf("command %d did not go through the handed spare", i)
		}
		want := r.Path() + "|two words|"
		if !strings.HasPrefix(res.Output, "Exit code: 3\n") || !strings.Contains(res.Output, "\n"+want) {
			t.Fatalf("command %d: %q, want %q and exit 3", i, res.Output, want)
		}
	}
	// A command bigger than the init keeps on its stack.
	c := awaitHandedSpare(t)
	long := strings.Repeat("x", 20_000)
	if res := runShell(t, ts, "echo "+long+" | wc -c", 0); !strings.HasSuffix(res.Output, "\n20001\n") || c.handed.Load() != 4 {
		t.Fatalf("a 20 kB command: %q (%d through the spare)", res.Output, c.handed.Load())
	}
}

// A handed spare gets its go from the daemon itself while nothing the
// server checks has changed since it handed the spare over; a socket
// bound since sends the command the server's way, which covers it: the
// command cannot reach it.
func TestCellSpareGoesFromTheDaemon(t *testing.T) {
	for _, net := range []Network{{}, {Off: true, Why: "a test"}} {
		t.Run(fmt.Sprintf("network off %v", net.Off), func(t *testing.T) { spareGoesFromTheDaemon(t, net) })
	}
}

func spareGoesFromTheDaemon(t *testing.T, net Network) {
	r, _, _ := newTree(t)
	useSandbox(t)
	ts := newShellTool(r).WithNetwork(net)
	if res := runShell(t, ts, "true", 0); res.IsError {
		t.Fatalf("the first command: %q", res.Output)
	}
	for i := range 3 {
		c := awaitHandedSpare(t)
		handed, direct := c.handed.Load(), c.direct.Load()
		res := runShell(t, ts, "echo go $PWD", 0)
		if c.handed.Load() != handed+1 || c.direct.Load() != direct+1 {
			t.Fatalf("command %d: handed %d→%d, given the go by the daemon %d→%d", i, handed, c.handed.Load(), direct, c.direct.Load())
		}
		if want := "go " + r.Path() + "\n"; withoutWall(res.Output) != reported(0, want) {
			t.Fatalf("command %d: %q, want %q", i, res.Output, want)
		}
	}
	c := awaitHandedSpare(t)
	handed, direct := c.handed.Load(), c.direct.Load()
	sock := filepath.Join(hostDir(t), "since.sock")
	l, err := gonet.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := runShell(t, ts, probeCommand(t, "__dial-unix", sock), 0).Output
	if !strings.HasPrefix(body(got), "dial: ") {
		t.Errorf("a command reached a socket bound after its spare was handed over: %q", got)
	}
	if c.handed.Load() != handed+1 || c.direct.Load() != direct {
		t.Errorf("with a socket bound since: handed %d→%d, given the go by the daemon %d→%d (want the server's go)",
			handed, c.handed.Load(), direct, c.direct.Load())
	}
}

// The daemon's stat through a cell's root is stat(2) as the cell sees it,
// the root itself included: here, through this process's own root, what
// stat gives.
func TestCellViewStat(t *testing.T) {
	var v cellView
	v.open(os.Getpid())
	if !v.ok {
		t.Fatal("cannot open this process's root and socket table")
	}
	defer v.close()
	dirs := []string{"/", "/tmp", hostDir(t), filepath.Join(hostDir(t), "absent")}
	if got, want := rulesStampOf(dirs, dirs, v.stat), rulesStampOf(dirs, dirs, unix.Stat); got != want {
		t.Errorf("stamp through the root %q, by stat %q", got, want)
	}
}
