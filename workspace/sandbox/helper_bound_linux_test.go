//go:build linux && cgo

package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cappedForkLoop forks until fork fails or it has made the number its
// argument gives, each child ignoring SIGTERM and waiting forever, then
// prints how many it made and exits: the cap keeps a test of an unbounded
// sandbox from taking the machine's pids.
const cappedForkLoop = `import os, signal, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
cap, n = int(sys.argv[1]), 0
while n < cap:
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        signal.pause()
        os._exit(0)
    n += 1
print("made", n, flush=True)
`

// TestNoNamespacesBoundsACallsProcesses: where user namespaces are
// refused (no cell, the per-command helper's second stage in no namespace
// of its own) a command that forks until fork fails is still stopped at
// the bound (a pids cgroup of the call's where one can be made, else a
// process limit over the user's processes now), and the call ends.
func TestNoNamespacesBoundsACallsProcesses(t *testing.T) {
	r, rootDir, _ := newTree(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if netnsErr() == nil {
		// Refuse them to the helper: it runs in a user namespace that may
		// make none.
		Set(Config{Helper: []string{exe, "__no-userns"}, Pids: testPids})
	} else {
		Set(Config{Helper: []string{exe, sandboxSubcommand}, Pids: testPids}) // refused here already
	}
	t.Cleanup(func() { Set(Config{}) })
	writeFile(t, filepath.Join(rootDir, "fork.py"), cappedForkLoop)
	ts := newShellTool(r)
	if res := runShell(t, ts, "true", 60_000); res.IsError { // and the cell's failure to start is known
		t.Fatalf("true: %s", res.Output)
	}
	start := time.Now()
	res := runShell(t, ts, "/usr/bin/python3 fork.py "+strconv.Itoa(4*testPids), 60_000)
	took := time.Since(start)
	made := -1
	for _, line := range strings.Split(res.Output, "\n") {
		if n, ok := strings.CutPrefix(line, "made "); ok {
			made, _ = strconv.Atoi(n)
		}
	}
	if made < 0 || made > testPids {
		t.Fatalf("without user namespaces the command made %d processes (bound %d): %s", made, testPids, res.Output)
	}
	if took > KillGrace+10*time.Second {
		t.Errorf("the call took %v to end", took)
	}
}

// TestUserTasksCountsThreads: the count RLIMIT_NPROC is set over holds
// this process's own threads at least.
func TestUserTasksCountsThreads(t *testing.T) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	if n := userTasks(os.Getuid()); n < len(tasks) {
		t.Errorf("userTasks = %d, fewer than this process's %d threads", n, len(tasks))
	}
}
