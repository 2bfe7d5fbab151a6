//go:build !linux

package sandbox

import (
	"context"
	"io"
	"time"
)

// Cells exist on Linux only.
func runInCell(context.Context, Config, string, string, string, Network, Access, []string, time.Duration, io.Writer, callIO, ChangeHook) (Outcome, bool) {
	return Outcome{}, false
}

func closeCells() {}

// ProcessBoundStatus: outside Linux nothing bounds a command's processes.
func ProcessBoundStatus(int) string {
	return "nothing bounds how many processes a command starts on this system"
}
