package safesocket

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
)

// ErrUnsafe is wrapped by Dial when the socket, its directory or
// the process answering on it could let another user stand in for the
// daemon; the message says what to fix. A client must not start a daemon of
// its own then: the path is not free.
var ErrUnsafe = errors.New("refusing the hearth socket")

// Dial connects a client (hearth acp, ask, status, stop, inspect,
// doctor) to the daemon's socket at path, checking before anything is sent
// that it is the user's own: the directory passes CheckDir, the socket
// is a socket owned by the user that others cannot connect to (0600), and
// the process that accepts runs as the user (where peer credentials can be
// read). A socket that does not exist or that nobody answers on gives an
// error that does not wrap ErrUnsafe: no daemon is running.
func Dial(ctx context.Context, path string) (net.Conn, error) {
	if err := Check(path); err != nil {
		return nil, err
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("connect to the hearth daemon at %s: %w", path, err)
	}
	uid, ok, err := peerUID(c)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("%w %s: %w", ErrUnsafe, path, err)
	}
	if ok && uid != os.Getuid() {
		c.Close()
		return nil, fmt.Errorf("%w %s: the process answering on it runs as uid %d, not as you (uid %d); stop it, or set HEARTH_SOCKET to a path in a directory only you can write",
			ErrUnsafe, path, uid, os.Getuid())
	}
	return c, nil
}

// Check reports why the socket at path is not safe to connect to,
// wrapping ErrUnsafe, or an fs.ErrNotExist error when there is none.
func Check(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no hearth socket at %s: %w", path, err)
	}
	if err != nil {
		return fmt.Errorf("hearth socket: %w", err)
	}
	if err := CheckDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("%w: %w", ErrUnsafe, err)
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("%w %s: it is not a socket; remove it or set HEARTH_SOCKET", ErrUnsafe, path)
	}
	uid, ok := ownerUID(fi)
	if !ok {
		return nil // no owner or mode to check here (Windows): the directory's ACL guards
	}
	if uid != os.Getuid() {
		return fmt.Errorf("%w %s: it belongs to uid %d, not to you (uid %d); stop that daemon, or set HEARTH_SOCKET to a path in a directory only you can write",
			ErrUnsafe, path, uid, os.Getuid())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%w %s: it is mode %04o, so other users can connect to it and act as you; run chmod 600 %s (hearth serve makes it 0600: restart the daemon)",
			ErrUnsafe, path, perm, path)
	}
	return nil
}
