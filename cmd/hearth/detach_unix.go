//go:build !windows

package main

import (
	"os/exec"
	"syscall"
)

// detach puts the daemon in its own session so it outlives the editor.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
