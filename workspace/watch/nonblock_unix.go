//go:build unix

package watch

import "syscall"

// OpenNonblock makes an open return at once on a FIFO with no writer, so a
// FIFO swapped in for a file cannot stall a tool.
const OpenNonblock = syscall.O_NONBLOCK
