//go:build !unix

package mcp

import "os/exec"

// ownGroup does nothing here: the SDK stops the server process itself.
func ownGroup(cmd *exec.Cmd) {}

// killGroup kills the server process if it is still there.
func killGroup(cmd *exec.Cmd) { cmd.Process.Kill() }
