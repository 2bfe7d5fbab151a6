//go:build unix

package daemon

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// lockSocket takes an exclusive flock on path+".lock" (created 0600) and
// returns the open file holding it; closing the file releases the lock. It
// is held from before the stale-socket check until the listener closes, so
// two daemons started together cannot both decide the socket is stale and
// unlink each other's.
func lockSocket(path string) (*os.File, error) {
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("socket lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w on %s (it holds %s.lock)", ErrAlreadyRunning, path, path)
		}
		return nil, fmt.Errorf("socket lock %s.lock: %w", path, err)
	}
	return f, nil
}
