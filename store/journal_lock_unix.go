//go:build unix

package store

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes an exclusive flock on f without waiting: false when
// another process holds it.
func lockFile(f *os.File) bool {
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil
}
