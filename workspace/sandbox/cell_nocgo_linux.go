//go:build linux && !cgo

package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// Without cgo there is no cell: each command runs through the per-command
// helper.
func serveCell([]string) int {
	fmt.Fprintln(os.Stderr, "hearth sandbox: this build has no cell server (built without cgo)")
	return 2
}

func runInCell(context.Context, Config, string, string, string, Network, Access, []string, time.Duration, io.Writer, callIO, ChangeHook) (Outcome, bool) {
	return Outcome{}, false
}

func closeCells() {}

// ProcessBoundStatus: without cells nothing bounds a command's processes.
func ProcessBoundStatus(int) string {
	return "nothing bounds how many processes a command starts (this build has no sandbox cells)"
}
