//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The per-command helper bounds a call's processes where it cannot give
// the call a user namespace of its own (user namespaces refused: no cell,
// no namespace for the second stage): the first stage makes the call a
// pids cgroup where this process may divide one (root, cgroup v1, or a
// delegated v2 subtree) and the second stage joins it before it runs the
// shell; elsewhere the second stage sets RLIMIT_NPROC to the number of
// tasks the user has now plus the bound. That limit counts the user's
// tasks machine-wide: the user's other programs are never refused by it,
// but what they start while the command runs comes out of the command's
// share. The kernel does not apply it to root, who gets the cgroup.

// pidsCgroupFlag names the call's pids cgroup to the second stage.
const pidsCgroupFlag = "--pids-cgroup"

// helperCgroup makes the call's pids cgroup, bounded at pids, named after
// the first stage's pid; "" when none can be made here.
func helperCgroup(pids int) string {
	if pids <= 0 {
		return ""
	}
	base, err := pidsCgroup()
	if err != nil {
		return ""
	}
	dir := filepath.Join(base, "hearth-call-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return ""
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(pids)), 0); err != nil {
		unix.Rmdir(dir)
		return ""
	}
	return dir
}

// removeHelperCgroup removes the call's cgroup once its processes are
// gone: the kernel may take a moment to release the last of them.
func removeHelperCgroup(dir string) {
	if dir == "" {
		return
	}
	for range 200 {
		if err := unix.Rmdir(dir); err != unix.EBUSY {
			return
		}
		unix.Nanosleep(&unix.Timespec{Nsec: 5e6}, nil) // the kernel's release has no event to wait on
	}
}

// boundCall applies the bound in the second stage, before its
// confinement: it joins the call's cgroup (cgroup, from the first stage),
// or sets RLIMIT_NPROC — to pids in a user namespace of the call's own
// (ownNS), where the kernel counts only its tasks, else to the user's
// tasks now plus pids.
func boundCall(cgroup string, pids int, ownNS bool) error {
	if cgroup != "" {
		if err := os.WriteFile(filepath.Join(cgroup, "cgroup.procs"), []byte("0"), 0); err != nil {
			return fmt.Errorf("join the call's pids cgroup: %w", err)
		}
		return nil
	}
	if pids <= 0 || os.Getuid() == 0 {
		return nil
	}
	limit := pids
	if !ownNS {
		limit += userTasks(os.Getuid())
	}
	lim := unix.Rlimit{Cur: uint64(limit), Max: uint64(limit)}
	if err := unix.Setrlimit(unix.RLIMIT_NPROC, &lim); err != nil {
		return fmt.Errorf("bound the call's processes: %w", err)
	}
	return nil
}

// userTasks counts the tasks (processes and threads: RLIMIT_NPROC counts
// each) whose real uid is uid.
func userTasks(uid int) int {
	dir, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	want := strconv.Itoa(uid)
	n := 0
	for _, e := range dir {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue // gone meanwhile
		}
		var real, threads string
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Uid:"); ok {
				if f := strings.Fields(v); len(f) > 0 {
					real = f[0]
				}
			} else if v, ok := strings.CutPrefix(line, "Threads:"); ok {
				threads = strings.TrimSpace(v)
			}
		}
		if real == want {
			t, _ := strconv.Atoi(threads)
			n += max(t, 1)
		}
	}
	return n
}

// pidsCgroup is the directory of this process's cgroup in the pids
// controller's hierarchy: v1's pids mount, or v2 where pids is enabled.
func pidsCgroup() (string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var v2 string
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2 = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "pids" {
				dir := filepath.Join("/sys/fs/cgroup/pids", parts[2])
				if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err == nil {
					return dir, nil
				}
			}
		}
	}
	if v2 != "" {
		dir := filepath.Join("/sys/fs/cgroup", v2)
		if b, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control")); err == nil && strings.Contains(string(b), "pids") {
			return dir, nil
		}
	}
	return "", errors.New("no pids cgroup this process may divide")
}

// defaultPids is the default bound on one command's processes: a
// sixteenth of the machine's pid space, between 512 and 8192, so that one
// command can never take the pids every other program needs. Read once:
// it is asked for at every command.
var defaultPids = sync.OnceValue(func() int {
	n := 32768
	if b, err := os.ReadFile("/proc/sys/kernel/pid_max"); err == nil {
		if v, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			n = v
		}
	}
	return min(8192, max(512, n/16))
})
