//go:build linux && cgo

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// pidBound is how a cell bounds each call's processes: a pids cgroup of
// the call's own under the cell's (where the cell may make one: root, and
// cgroup v1 or a delegated v2 subtree), else a user namespace of the
// call's own whose RLIMIT_NPROC counts only the call's processes (the
// kernel counts processes per user per user namespace; it does not apply
// the limit to the host's root, hence the cgroup first). It lives as long
// as the cell server.
type pidBound struct {
	limit int
	base  string // the cell's cgroup directory, "" when there is none
	how   string // for the doctor
}

// callBound is one call's share of the bound, from forCall.
type callBound struct {
	ownUserNS bool
	nproc     int
	procsFD   int    // the call's cgroup.procs, -1: none
	dir       string // the call's cgroup, removed when it is done
}

func newPidBound(limit int) pidBound {
	b := pidBound{limit: limit}
	if limit <= 0 {
		return b
	}
	if os.Getuid() == 0 {
		if dir, err := pidsCgroup(); err == nil {
			// A name of its own (the cell is pid 1 of its pid namespace, as
			// every other cell is), with its daemon's pid, by which a later
			// daemon tells it stale (sweepStaleCells).
			owner, _ := strconv.Atoi(os.Getenv(cellOwnerEnv))
			if base, err := os.MkdirTemp(dir, cellCgroupPrefix(owner)); err == nil {
				os.Chmod(base, 0o755)
				b.base = base
			}
		}
	}
	return b
}

// forCall makes the call's bound: its cgroup, or its user namespace's
// limit.
func (b pidBound) forCall(n uint64) (callBound, error) {
	c := callBound{procsFD: -1}
	switch {
	case b.limit <= 0:
	case b.base != "":
		c.dir = filepath.Join(b.base, "call-"+strconv.FormatUint(n, 10))
		if err := os.Mkdir(c.dir, 0o755); err != nil {
			return c, fmt.Errorf("make the call's pids cgroup: %w", err)
		}
		if err := os.WriteFile(filepath.Join(c.dir, "pids.max"), []byte(strconv.Itoa(b.limit)), 0); err != nil {
			os.Remove(c.dir)
			return c, fmt.Errorf("bound the call's pids cgroup: %w", err)
		}
		fd, err := unix.Open(filepath.Join(c.dir, "cgroup.procs"), unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			os.Remove(c.dir)
			return c, fmt.Errorf("open the call's pids cgroup: %w", err)
		}
		c.procsFD = fd
	case os.Getuid() != 0:
		c.ownUserNS, c.nproc = true, b.limit
	}
	return c, nil
}

// started releases what the fork needed.
func (c callBound) started() {
	if c.procsFD >= 0 {
		unix.Close(c.procsFD)
	}
}

// done removes the call's cgroup once its processes are gone; the kernel
// may take a moment to release the last of them.
func (c callBound) done() {
	if c.dir == "" {
		return
	}
	for range 200 {
		if err := unix.Rmdir(c.dir); err != unix.EBUSY {
			return
		}
		unix.Nanosleep(&unix.Timespec{Nsec: 5e6}, nil) // the kernel's release has no event to wait on
	}
}

func (b pidBound) close() {
	if b.base != "" {
		unix.Rmdir(b.base)
	}
}

// cellOwnerEnv carries the daemon's pid to its cell servers, which see
// only their own pid namespace.
const cellOwnerEnv = "HEARTH_CELL_OWNER"

// cellCgroupPrefix begins the name of each pids cgroup a cell of the
// daemon with pid owner makes.
func cellCgroupPrefix(owner int) string { return "hearth-cell-" + strconv.Itoa(owner) + "-" }

// sweepStaleCells removes the pids cgroups that the cells of daemons no
// longer running left behind (a daemon killed with SIGKILL has no chance
// to): those whose owner's pid is gone. A cgroup that still holds a
// process cannot be removed, so a mistaken owner costs nothing.
func sweepStaleCells() {
	dir, err := pidsCgroup()
	if err != nil {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "hearth-cell-")
		pid, _, ok2 := strings.Cut(rest, "-")
		owner, err := strconv.Atoi(pid)
		if !ok || !ok2 || err != nil || owner <= 0 || unix.Kill(owner, 0) != unix.ESRCH {
			continue
		}
		base := filepath.Join(dir, e.Name())
		calls, _ := os.ReadDir(base)
		for _, c := range calls {
			if c.IsDir() && strings.HasPrefix(c.Name(), "call-") {
				unix.Rmdir(filepath.Join(base, c.Name()))
			}
		}
		unix.Rmdir(base)
	}
}

// ProcessBoundStatus says, for `hearth doctor`, how each command's
// processes are bounded here: at pids (0: the default), by a pids cgroup,
// a limit in the command's own user namespace, or, where user namespaces
// are refused, a limit over the user's processes.
func ProcessBoundStatus(pids int) string {
	if pids <= 0 {
		pids = defaultPids()
	}
	_, cgErr := pidsCgroup()
	if err := mountnsErr(); err != nil {
		switch {
		case cgErr == nil:
			return fmt.Sprintf("user namespaces are refused here (%v): commands get no pid namespace, but each may hold at most %d processes and threads at once (a pids cgroup of its own; HEARTH_SANDBOX_PIDS)", err, pids)
		case os.Getuid() == 0:
			return fmt.Sprintf("user namespaces are refused here (%v) and, as root with no pids cgroup to divide (%v), nothing bounds how many processes a command may start", err, cgErr)
		}
		return fmt.Sprintf("user namespaces are refused here (%v): commands get no pid namespace, but each may start at most %d processes and threads more than you have when it starts (RLIMIT_NPROC, which counts all of yours; HEARTH_SANDBOX_PIDS)", err, pids)
	}
	how := "a process limit in its own user namespace"
	if os.Getuid() == 0 {
		if cgErr != nil {
			return fmt.Sprintf("each command runs in a pid namespace of its own (its processes end with it), but as root with no pids cgroup to divide (%v) nothing bounds how many it may start", cgErr)
		}
		how = "a pids cgroup of its own"
	}
	return fmt.Sprintf("each command runs in a pid namespace of its own (its processes end with it) and may hold at most %d processes and threads at once (%s; HEARTH_SANDBOX_PIDS)", pids, how)
}
