//go:build linux && cgo

package sandbox

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// usedPids counts the machine's tasks (processes and threads: each takes
// a pid).
func usedPids(t *testing.T) int {
	t.Helper()
	dir, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range dir {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		tasks, err := os.ReadDir("/proc/" + e.Name() + "/task")
		if err != nil {
			continue // gone meanwhile
		}
		n += len(tasks)
	}
	return n
}

func pidMax(t *testing.T) int {
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// forkLoop forks until fork fails, each child ignoring SIGTERM and
// waiting forever; it prints how many it made, tells the FIFO named by its
// argument (when given) and then forks on, failing, until it is killed.
const forkLoop = `import os, signal, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
n = 0
while True:
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        signal.pause()
        os._exit(0)
    n += 1
print("made", n, flush=True)
if len(sys.argv) > 1:
    open(sys.argv[1], "w").write("full\n")
    while True:
        try:
            if os.fork() == 0:
                os._exit(0)
        except OSError:
            pass
`

// testPids is the bound the fork tests set: forks are slow on small
// virtual machines (several ms each), and the default bound's share of the
// pid space is TestDefaultPidsLeavesTheMachineItsPids's.
const testPids = 200

// useBoundedSandbox is useSandbox with each call bounded at testPids.
func useBoundedSandbox(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	Set(Config{Helper: []string{exe, sandboxSubcommand}, Pids: testPids})
	t.Cleanup(func() { Set(Config{}) })
}

// TestDefaultPidsLeavesTheMachineItsPids: one call's default bound is at
// most a tenth of the machine's pid space.
func TestDefaultPidsLeavesTheMachineItsPids(t *testing.T) {
	if n, max := defaultPids(), pidMax(t); n > max/10 && n > 512 {
		t.Errorf("default bound %d of %d pids", n, max)
	}
}

// TestCellBoundsACallsProcesses: a command that forks until fork fails —
// its children ignoring SIGTERM — is stopped at the call's bound, far
// below the machine's pid space (the machine keeps more than 90% of the
// pids it had free), and when the shell exits every one of them is gone
// within the grace.
func TestCellBoundsACallsProcesses(t *testing.T) {
	r, rootDir, _ := newTree(t)
	useBoundedSandbox(t)
	writeFile(t, filepath.Join(rootDir, "fork.py"), forkLoop)
	free := pidMax(t) - usedPids(t)
	start := time.Now()
	res := runShell(t, newShellTool(r), "/usr/bin/python3 fork.py", 60_000)
	took := time.Since(start)
	var made int
	for _, line := range strings.Split(res.Output, "\n") {
		if n, ok := strings.CutPrefix(line, "made "); ok {
			made, _ = strconv.Atoi(n)
		}
	}
	if made < testPids/2 || made > testPids {
		t.Fatalf("the command made %d processes (bound %d): %s", made, testPids, res.Output)
	}
	if lost := made; float64(lost) > 0.1*float64(free) {
		t.Errorf("one call took %d of the %d free pids", lost, free)
	}
	if took > KillGrace+5*time.Second {
		t.Errorf("the call took %v to end", took)
	}
	if after := pidMax(t) - usedPids(t); float64(after) < 0.9*float64(free) {
		t.Errorf("after the call %d pids are free, %d before: the call's processes outlived it", after, free)
	}
}

// TestCellCancelEndsAForkLoopFast: cancel ends a call whose processes
// ignore SIGTERM and keep forking within 2 s.
func TestCellCancelEndsAForkLoopFast(t *testing.T) {
	r, rootDir, _ := newTree(t)
	useBoundedSandbox(t)
	writeFile(t, filepath.Join(rootDir, "fork.py"), forkLoop)
	fifo := filepath.Join(rootDir, "full")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan toolResult, 1)
	go func() {
		done <- newShellTool(r).Run(ctx, "shell", json.RawMessage(mustJSON(t, map[string]any{"command": "/usr/bin/python3 fork.py full", "timeout_ms": 60_000})))
	}()
	full := make(chan error, 1)
	go func() { _, err := os.ReadFile(fifo); full <- err }() // returns once the loop is full
	select {
	case err := <-full:
		if err != nil {
			t.Fatal(err)
		}
	case res := <-done:
		t.Fatalf("the call ended before its loop was full: %q", res.Output)
	}
	cancelled := time.Now()
	cancel()
	var res toolResult
	select {
	case res = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not end within 30 s of cancel")
	}
	d := time.Since(cancelled)
	t.Logf("the call ended %v after cancel", d)
	if d > 2*time.Second {
		t.Errorf("the call ended %v after cancel, want at most 2 s", d)
	}
	if !strings.Contains(res.Output, "[cancelled]") {
		t.Errorf("result = %q", res.Output)
	}
}

// TestCellPidNamespace: a command is in a pid namespace of its own, its
// init the call's (pid 1, the shell's parent), with a /proc that shows
// only its cell: none of the user's other processes.
func TestCellPidNamespace(t *testing.T) {
	r, _, _ := newTree(t)
	useSandbox(t)
	res := runShell(t, newShellTool(r), `echo ppid=$PPID; ls /proc | grep -c '^[0-9]'`, 0)
	if !strings.HasPrefix(body(res.Output), "ppid=1\n") {
		t.Fatalf("the shell's parent is not the call's init: %q", res.Output)
	}
	lines := strings.Split(body(res.Output), "\n")
	if n, err := strconv.Atoi(lines[1]); err != nil || n > 6 { // the cell, the init, sh, ls, grep
		t.Errorf("/proc shows %q processes, want the call's few", lines[1])
	}
}

// TestCellRestartsAfterItDies: a cell killed from outside is replaced by
// the next command, which runs as usual.
func TestCellRestartsAfterItDies(t *testing.T) {
	r, _, _ := newTree(t)
	useSandbox(t)
	ts := newShellTool(r)
	if res := runShell(t, ts, "echo one", 0); withoutWall(res.Output) != reported(0, "one\n") {
		t.Fatalf("first = %q", res.Output)
	}
	cells.mu.Lock()
	var victims []*cell
	for _, c := range cells.m {
		victims = append(victims, c)
	}
	cells.mu.Unlock()
	if len(victims) != 1 {
		t.Fatalf("%d cells run, want 1", len(victims))
	}
	victims[0].cmd.Process.Kill()
	<-victims[0].dead
	if res := runShell(t, ts, "echo two", 0); withoutWall(res.Output) != reported(0, "two\n") {
		t.Fatalf("after the cell died = %q", res.Output)
	}
}

// TestCellHidesSocketsBoundLater: a socket bound after the cell started
// (a tmux or an nvim server started while the session works) is out of a
// later command's reach, as one bound before it is; so is a covered socket
// the host removed and bound again.
func TestCellHidesSocketsBoundLater(t *testing.T) {
	r, _, _ := newTree(t)
	useSandbox(t)
	ts := newShellTool(r)
	if res := runShell(t, ts, "true", 0); res.IsError {
		t.Fatalf("the first command: %q", res.Output) // the cell runs from here
	}
	sock := filepath.Join(hostDir(t), "later.sock")
	for round := range 2 { // bound after the start; then removed and bound again
		awaitHandedSpare(t) // the command goes straight to it: the server checks the sockets all the same
		l, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		got := runShell(t, ts, probeCommand(t, "__dial-unix", sock), 0).Output
		l.Close()
		if !strings.HasPrefix(body(got), "dial: ") {
			t.Errorf("round %d: a command reached a socket bound while its cell ran: %q", round, got)
		}
	}
}

// TestStaleCellCgroupsSwept: the pids cgroups a SIGKILLed daemon's cells
// left behind are removed when a daemon next starts a cell; a live
// daemon's, and this one's own, stay.
func TestStaleCellCgroupsSwept(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("the cells make pids cgroups only as root")
	}
	dir, err := pidsCgroup()
	if err != nil {
		t.Skip("no pids cgroup here:", err)
	}
	dead := exec.Command("/bin/true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, cellCgroupPrefix(dead.Process.Pid)+"123")
	live := filepath.Join(dir, cellCgroupPrefix(os.Getppid())+"456")
	for _, d := range []string{filepath.Join(stale, "call-7"), live} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { syscall.Rmdir(filepath.Join(stale, "call-7")); syscall.Rmdir(stale); syscall.Rmdir(live) })
	sweepStaleCells()
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("a dead daemon's cell cgroup %s is left", stale)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live daemon's cell cgroup was removed: %v", err)
	}
}
