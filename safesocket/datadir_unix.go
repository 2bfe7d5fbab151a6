//go:build unix

package safesocket

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// flockNB takes an exclusive flock on f without waiting: false when another
// open file description holds it.
func flockNB(f *os.File) (bool, error) {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}
