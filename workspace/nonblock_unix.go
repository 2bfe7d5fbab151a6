//go:build unix

package workspace

import "syscall"

// openNonblock makes an open return at once on a FIFO with no writer, so a
// FIFO swapped in for a file cannot stall a tool.
const openNonblock = syscall.O_NONBLOCK
