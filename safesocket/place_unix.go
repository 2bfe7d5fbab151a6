//go:build unix

package safesocket

import "golang.org/x/sys/unix"

// writable asks the kernel whether this process may create entries in dir
// (write and search permission; a read-only file system says so too).
func writable(dir string) error { return unix.Access(dir, unix.W_OK|unix.X_OK) }
