//go:build linux

package daemon

import (
	"syscall"
	"unsafe"
)

// writeNow writes to a non-blocking socket. It never blocks, so it does
// not tell the scheduler it enters a system call: that would wake the
// runtime's monitor thread from its sleep for every batch of text.
func writeNow(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}
