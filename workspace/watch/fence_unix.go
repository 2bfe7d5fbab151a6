//go:build unix

package watch

import (
	"os"
	"syscall"
)

// processGone reports whether no process has this pid.
func processGone(pid int) bool {
	return pid <= 0 || syscall.Kill(pid, 0) == syscall.ESRCH
}

// ownedByMe reports whether dir belongs to this process's user.
func ownedByMe(dir string) bool {
	var st syscall.Stat_t
	return syscall.Lstat(dir, &st) == nil && int(st.Uid) == os.Getuid()
}
