//go:build unix && !linux

package daemon

import "syscall"

// writeNow writes to a non-blocking socket.
func writeNow(fd int, p []byte) (int, error) { return syscall.Write(fd, p) }
