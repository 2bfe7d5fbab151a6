package daemon

import "golang.org/x/sys/unix"

// syncObjects flushes the filesystem of the object store dir: every
// pre-image a call's commands made kept, with one syncfs(2).
func syncObjects(dir string) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	unix.Syncfs(fd)
	unix.Close(fd)
}
