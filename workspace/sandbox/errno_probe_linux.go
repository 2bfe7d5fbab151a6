//go:build linux && cgo

package sandbox

/*
#include <errno.h>
#include <poll.h>

// hearth_dirty_errno writes this thread's errno until fd is readable, as
// a cell server's thread may while a call's init runs on its thread-local
// storage (see sys in cell_spawn_linux.go).
static void hearth_dirty_errno(int fd) {
	struct pollfd p = { fd, POLLIN, 0 };
	while (poll(&p, 1, 0) == 0) errno = EAGAIN;
}
*/
import "C"

// dirtyErrnoUntil writes the calling thread's C errno until fd is
// readable. For tests: the thread is the one that prepared a call when the
// caller has locked it (runtime.LockOSThread).
func dirtyErrnoUntil(fd int) { C.hearth_dirty_errno(C.int(fd)) }
