//go:build !linux

package workspace

import (
	"fmt"
	"os"
	"runtime"
)

// sandboxSupported: the helper (Landlock, a subreaper) is Linux-only.
const sandboxSupported = false

// SandboxStatus says how the shell tool's commands are confined here: not
// at all, outside Linux.
func SandboxStatus() string {
	return "not sandboxed: Landlock is Linux-only (this is " + runtime.GOOS + "); commands run with your full file access"
}

// SandboxExec is the helper of the Linux sandbox; it is never started here.
func SandboxExec([]string) int {
	fmt.Fprintln(os.Stderr, "hearth sandbox: only on Linux, not on", runtime.GOOS)
	return 2
}
