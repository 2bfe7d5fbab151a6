//go:build !linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

// sandboxSupported: the helper (Landlock, a subreaper) is Linux-only.
const sandboxSupported = false

// Status says how the shell tool's commands are confined here: not
// at all, outside Linux.
func Status() string {
	return "not sandboxed: Landlock is Linux-only (this is " + runtime.GOOS + "); commands run with your full file access"
}

// landlockWorks: no Landlock outside Linux.
func landlockWorks() bool { return false }

// networkUnsupported is why the network cannot be turned off here.
const networkUnsupported = "Landlock is Linux-only (this is " + runtime.GOOS + ")"

// kernelNetwork is never reached: NetworkEnforced stops at sandboxSupported.
func kernelNetwork([]string) (bool, string) { return false, networkUnsupported }

// NetworkStatus says the network cannot be turned off for commands here.
func NetworkStatus() string {
	return "cannot restrict the network: " + networkUnsupported + "; commands have the network in every mode"
}

// Exec is the helper of the Linux sandbox; it is never started here.
func Exec([]string) int {
	fmt.Fprintln(os.Stderr, "hearth sandbox: only on Linux, not on", runtime.GOOS)
	return 2
}

// privateTmpDir: commands get no private /tmp outside Linux.
func privateTmpDir(string) (string, error) {
	return "", errors.New("no private /tmp outside Linux")
}

// gitDirs: nothing to protect where commands get no mount namespace.
func gitMountPaths(string) []string { return nil }

// SocketStatus: outside Linux nothing hides a unix socket from commands.
func SocketStatus([]string) string {
	return "every unix socket with a path is reachable from commands: they run unconfined outside Linux (this is " + runtime.GOOS + ")"
}

// defaultPids: no bound is applied outside Linux.
func defaultPids() int { return 0 }
