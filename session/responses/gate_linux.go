//go:build linux

package responses

import (
	"syscall"
	"unsafe"
)

// readNow reads from a non-blocking socket. It never blocks, so it does not
// tell the scheduler it enters a system call: that would wake the
// runtime's monitor thread from its sleep for every batch of deltas.
func readNow(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, errno := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}
