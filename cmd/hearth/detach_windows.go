//go:build windows

package main

import "os/exec"

// detach does nothing more on Windows: runSpawn's exit leaves the daemon
// with a parent that is gone, so a kill of the client's tree (taskkill /T)
// does not reach it.
func detach(cmd *exec.Cmd) {}
