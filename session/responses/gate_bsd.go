//go:build unix && !linux

package responses

import "syscall"

// readNow reads from a non-blocking socket.
func readNow(fd int, p []byte) (int, error) { return syscall.Read(fd, p) }
