package workspace

import (
	"os/exec"

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
