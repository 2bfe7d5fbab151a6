//go:build unix

package daemon

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"

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

// umaskMu serialises listenPrivate's umask changes with each other.
var umaskMu sync.Mutex

// listenPrivate binds path with no permission for group or others from the
// moment it exists: a client checking the socket between bind and a chmod
// would otherwise find it 0755 (the umask's) and refuse it. The umask is
// process-wide; while it is narrowed, a file created elsewhere can only come
// out more private than asked, never less.
func listenPrivate(path string) (net.Listener, error) {
	umaskMu.Lock()
	old := unix.Umask(0o077)
	ln, err := net.Listen("unix", path)
	unix.Umask(old)
	umaskMu.Unlock()
	return ln, err
}
