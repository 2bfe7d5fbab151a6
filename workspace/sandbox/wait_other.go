//go:build unix && !linux

package sandbox

import (
	"os/exec"
	"syscall"
)

// awaitExit blocks until the started cmd's process has exited, and reaps it:
// outside Linux there is no portable way to wait without reaping, so the
// group's id is free for reuse from here until the group is killed; the
// window is a few system calls long.
func awaitExit(cmd *exec.Cmd) error { return cmd.Wait() }

// reap returns what awaitExit got: the process is already collected.
func reap(_ *exec.Cmd, err error) error { return err }

// shellProcAttr puts the command in a process group of its own.
func shellProcAttr(bool) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
