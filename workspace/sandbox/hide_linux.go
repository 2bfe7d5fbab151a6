package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// hideSocket covers the daemon's socket in the command's own mount
// namespace, so that no path there leads to it and nothing the command
// starts can connect to the daemon: the socket's directory gets an empty,
// read-only tmpfs over it — unless that directory holds a directory the
// command may write (keep: the workspace, the temp dir), which must stay
// visible; then /dev/null is bound over the socket alone. The mounts are
// private to the namespace. Landlock, applied next, forbids the command to
// unmount them, and a namespace it makes of its own inherits them locked.
// A socket that does not exist is nothing to hide.
func hideSocket(sock string, keep []string) error {
	if _, err := os.Lstat(sock); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	sock = canonical(sock)
	dir := filepath.Dir(sock)
	if !holdsAny(dir, keep) {
		if err := unix.Mount("hearth-hidden", dir, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0,size=4k"); err != nil {
			return fmt.Errorf("cover %s: %w", dir, err)
		}
		return nil
	}
	if err := unix.Mount("/dev/null", sock, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("cover %s: %w", sock, err)
	}
	return nil
}

// holdsAny reports whether dir is, or is an ancestor of, one of paths.
func holdsAny(dir string, paths []string) bool {
	for _, p := range paths {
		p = canonical(p)
		if p == dir || dir == "/" || strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	return false
}
