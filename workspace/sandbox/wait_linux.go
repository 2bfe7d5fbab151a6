package sandbox

import (
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// awaitExit blocks until the started cmd's process has exited, without
// reaping it: the zombie keeps its pid, the id of its process group,
// reserved until reap, so signals sent to the group in between cannot reach
// an unrelated group that reused the number.
func awaitExit(cmd *exec.Cmd) error {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err
		}
	}
}

// reap collects the exited process awaitExit saw and releases cmd.
func reap(cmd *exec.Cmd, _ error) error { return cmd.Wait() }

// shellProcAttr puts the command in a process group of its own; the sandbox
// helper also gets SIGTERM when the daemon dies (PR_SET_PDEATHSIG), so it
// kills the call's processes instead of leaving them to init.
func shellProcAttr(helper bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	if helper {
		a.Pdeathsig = syscall.SIGTERM
	}
	return a
}
