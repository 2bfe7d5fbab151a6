//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// ownGroup puts a stdio server in a process group of its own, so that
// stopping it stops what it started (npx → node) too.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills what is left of cmd's process group.
func killGroup(cmd *exec.Cmd) {
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
