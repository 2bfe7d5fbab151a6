//go:build unix

package sandbox

import "golang.org/x/sys/unix"

// executableFile reports whether p is a regular file with an execute bit.
// (Raw system calls: a command's path is looked up in every PATH
// directory before it, at every command.)
func executableFile(p string) bool {
	var st unix.Stat_t
	return unix.Stat(p, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Mode&0o111 != 0
}

// startsRunnable reports whether the file p starts as an ELF binary or a
// #! script does.
func startsRunnable(p string) bool {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var head [4]byte
	if n, err := unix.Pread(fd, head[:], 0); err != nil || n != len(head) {
		return false
	}
	return string(head[:]) == "\x7fELF" || string(head[:2]) == "#!"
}
