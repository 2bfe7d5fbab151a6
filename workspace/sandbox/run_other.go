//go:build !unix

package sandbox

import (
	"context"
	"errors"
	"io"
	"runtime"
	"time"
)

// Unsupported is the shell tool's answer on systems without /bin/sh
// and process groups.
const Unsupported = "shell is not supported on this OS (" + runtime.GOOS + "); use read_file, list_dir, grep, write_file and edit_file instead"

// runCommand is never reached: planShell refuses every call first.
func runCommand(_ context.Context, _ string, _ program, _ bool, _ time.Duration, _ io.Writer, cio callIO) Outcome {
	cio.close()
	cio.read.Close()
	return Outcome{Err: errors.New(Unsupported)}
}
