//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// A running command's output is shown as it comes: what it printed before
// it waits (on a FIFO the test holds) is shown while it waits; nothing is
// shown once the call returned; the model's output is unchanged.
func TestShellShowsOutputWhileItRuns(t *testing.T) {
	r, root, _ := newTree(t)
	fifo := filepath.Join(root, "go-on")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	shown := make(chan string, 100)
	var returned atomic.Bool
	ts := newShellTool(r).WithLive(func(out string) {
		if returned.Load() {
			t.Errorf("shown after the call returned: %q", out)
		}
		select {
		case shown <- out:
		default:
		}
	})
	done := make(chan toolResult, 1)
	go func() {
		res := runShell(t, ts, "echo first; read x < go-on; echo second $x", 0)
		returned.Store(true)
		done <- res
	}()
	waitShown(t, shown, func(out string) bool { return out == "first\n" })
	select {
	case res := <-done:
		t.Fatalf("the command ended before the test let it: %+v", res)
	default:
	}
	if err := os.WriteFile(fifo, []byte("now\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var res toolResult
	select {
	case res = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the command did not end")
	}
	if res.IsError || withoutWall(res.Output) != reported(0, "first\nsecond now\n") {
		t.Fatalf("result %+v", res)
	}
}

// A command that ends before liveFirst has passed since its first output
// is never shown live: its output is in the result alone, and the daemon
// sent no update while it ran.
func TestShellQuickCommandIsNotShownLive(t *testing.T) {
	r, _, _ := newTree(t)
	defer func(d time.Duration) { liveFirst = d }(liveFirst)
	liveFirst = time.Hour
	var shown atomic.Int32
	ts := newShellTool(r).WithLive(func(string) { shown.Add(1) })
	res := runShell(t, ts, "echo quick", 0)
	if res.IsError || withoutWall(res.Output) != reported(0, "quick\n") {
		t.Fatalf("result %+v", res)
	}
	if n := shown.Load(); n != 0 {
		t.Errorf("a command that ended at once was shown live %d times", n)
	}
}

// What is shown is bounded, head and tail, however much the command
// prints; the middle is counted.
func TestShellLiveOutputIsBounded(t *testing.T) {
	r, root, _ := newTree(t)
	fifo := filepath.Join(root, "go-on")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	shown := make(chan string, 100)
	ts := newShellTool(r).WithLive(func(out string) {
		select {
		case shown <- out:
		default:
		}
	})
	done := make(chan toolResult, 1)
	go func() {
		done <- runShell(t, ts, "echo start; head -c 100000 /dev/zero | tr '\\0' x; echo; echo end; read x < go-on", 0)
	}()
	out := waitShown(t, shown, func(out string) bool { return strings.HasSuffix(out, "end\n") })
	if !strings.HasPrefix(out, "start\n") || !strings.Contains(out, "bytes omitted") || len(out) > liveHeadBytes+liveTailBytes+100 {
		t.Fatalf("shown %d bytes: %.80q … %.80q", len(out), out, out[max(0, len(out)-80):])
	}
	os.WriteFile(fifo, []byte("\n"), 0o600)
	if res := <-done; res.IsError || len(res.Output) <= len(out) {
		t.Fatalf("the model's output (%d bytes) is not the whole capped output: %+v", len(res.Output), res.IsError)
	}
}

// waitShown returns the first output shown that ok accepts.
func waitShown(t *testing.T, shown <-chan string, ok func(string) bool) string {
	t.Helper()
	deadline := time.After(30 * time.Second)
	var last string
	for {
		select {
		case out := <-shown:
			if ok(out) {
				return out
			}
			last = out
		case <-deadline:
			t.Fatalf("not shown; last shown: %q", last)
		}
	}
}
