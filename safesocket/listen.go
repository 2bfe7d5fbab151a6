package safesocket

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"time"
)

// ErrAlreadyRunning is returned by Listen when another daemon answers on
// the socket.
var ErrAlreadyRunning = errors.New("another hearth daemon is already running")

// Listen opens the daemon's unix socket. A socket directory that does not
// exist is created 0700 (its missing parents too); one that exists is never
// chmodded (it may be $HOME or /tmp) but is refused when it is unsafe
// (CheckDir). A path that is not a socket, or a socket another user
// owns, is refused; a socket that still answers means a second daemon and
// is refused; a stale one (nobody answers) is removed. The new socket is
// 0600. A path the system cannot take, or a directory this user cannot
// write, is refused first, with the fix (CanListen).
func Listen(path string) (net.Listener, error) {
	if err := CanListen(path); err != nil {
		return nil, err
	}
	if err := prepareSocketDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	lock, err := lockSocket(path)
	if err != nil {
		return nil, err
	}
	ln, err := listenLocked(path)
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		return nil, err
	}
	return &lockedListener{Listener: ln, lock: lock}, nil
}

// lockedListener holds the socket's lock file as long as it listens.
type lockedListener struct {
	net.Listener
	lock *os.File // nil where there is no flock
}

func (l *lockedListener) Close() error {
	err := l.Listener.Close()
	if l.lock != nil {
		l.lock.Close()
	}
	return err
}

// listenLocked is Listen once the lock is held.
func listenLocked(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket; remove it or set HEARTH_SOCKET", path)
		}
		if uid, ok := ownerUID(fi); ok && uid != os.Getuid() {
			return nil, fmt.Errorf("socket %s belongs to uid %d, not to you; set HEARTH_SOCKET to a path in a directory only you can write", path, uid)
		}
		c, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			c.Close()
			return nil, fmt.Errorf("%w on %s", ErrAlreadyRunning, path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove stale socket: %w", err)
		}
	}
	ln, err := listenPrivate(path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("socket permissions: %w", err)
	}
	return ln, nil
}

// prepareSocketDir creates dir 0700 if it does not exist, or checks it if it
// does. Whether hearth created it is decided by os.Mkdir itself, not by a
// check before it, so a directory someone else makes in between is never
// taken for hearth's and chmodded.
func prepareSocketDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return fmt.Errorf("socket directory: %w", err)
	}
	switch err := os.Mkdir(dir, 0o700); {
	case err == nil:
		// Ours: make it 0700 whatever the umask did.
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("socket directory: %w", err)
		}
		return nil
	case errors.Is(err, fs.ErrExist):
		return CheckDir(dir)
	default:
		return fmt.Errorf("socket directory: %w", err)
	}
}

// CheckDir reports why dir, a directory hearth did not create, cannot
// hold the daemon's socket, with the fix in the message; nil when it can.
// hearth never changes the mode of such a directory. The rules:
//
//   - It must belong to you (or to root, like /tmp and /run): its owner can
//     replace anything in it.
//   - Others may read and traverse it (a 0755 $HOME is fine): the socket
//     itself is 0600 and the daemon checks each peer's uid, so reaching the
//     socket's name gives another user nothing.
//   - Others may not write to it unless the sticky bit is set: write access
//     lets them rename or remove the socket and put their own in its place,
//     where hearth's clients would connect to it. In a sticky directory (1777,
//     like /tmp) they cannot touch entries they do not own, and Listen
//     refuses a socket path that another user owns.
func CheckDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("socket directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("socket directory %s is not a directory; set HEARTH_SOCKET to a path in a directory", dir)
	}
	if uid, ok := ownerUID(fi); ok && uid != os.Getuid() && uid != 0 {
		return fmt.Errorf("socket directory %s belongs to uid %d, not to you; set HEARTH_SOCKET to a path in a directory you own", dir, uid)
	}
	if fi.Mode().Perm()&0o022 != 0 && fi.Mode()&os.ModeSticky == 0 {
		return fmt.Errorf("socket directory %s is mode %04o: others can replace the socket; remove their write access (chmod go-w %s) or set HEARTH_SOCKET to a path in a private directory",
			dir, fi.Mode().Perm(), dir)
	}
	return nil
}
