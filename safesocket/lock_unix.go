//go:build unix

package safesocket

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// lockSocket takes an exclusive flock on path+".lock" (created 0600) and
// returns the open file holding it; closing the file releases the lock. It
// is held from before the stale-socket check until the listener closes, so
// two daemons started together cannot both decide the socket is stale and
// unlink each other's.
//
// A lock held by a daemon that does not answer on path is given
// lockGrace to go: a daemon that was just killed lets go of it while the
// kernel tears the process down, after its socket already closed (a
// client that saw the socket close and restarted the daemon at once
// found the lock still held). One that answers is running: refused at
// once.
func lockSocket(path string) (*os.File, error) {
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("socket lock: %w", err)
	}
	deadline := time.Now().Add(lockGrace)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("socket lock %s.lock: %w", path, err)
		}
		if time.Now().After(deadline) || answers(path) {
			f.Close()
			return nil, fmt.Errorf("%w on %s (it holds %s.lock)", ErrAlreadyRunning, path, path)
		}
		time.Sleep(wait)
	}
}

// lockGrace is how long lockSocket waits for a holder that does not answer.
const lockGrace = 2 * time.Second

// answers reports whether something accepts a connection on the socket.
func answers(path string) bool {
	c, err := net.DialTimeout("unix", path, 100*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
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
