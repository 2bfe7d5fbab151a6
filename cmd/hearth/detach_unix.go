//go:build !windows

package main

import (
	"os/exec"
	"syscall"
)

// detach puts the daemon in a session of its own: no controlling terminal
// whose hangup ends it, and a process group of its own, which no signal to
// the client's group reaches. runSpawn's exit does the rest (spawn.go).
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
