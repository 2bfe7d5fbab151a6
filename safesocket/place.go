package safesocket

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// maxSocketPath is the longest socket path the system takes: sun_path (108
// bytes on Linux, 104 on macOS) less its terminating NUL.
var maxSocketPath = len(syscall.RawSockaddrUnix{}.Path) - 1

// CanListen reports why the daemon could not make its socket at path, with
// the fix: the path longer than the system takes, its directory — or, when
// that does not exist yet, the nearest one that does, where it would be
// created — not writable by this user. nil when it can. Listen asks it
// first, and `hearth doctor` asks it too, so both say the same. Whether the
// directory is safe is CheckDir's question.
func CanListen(path string) error {
	if n := len(path); n > maxSocketPath {
		return fmt.Errorf("the socket path %s is %d bytes, over the system's limit of %d: set HEARTH_SOCKET to a shorter path", path, n, maxSocketPath)
	}
	dir := filepath.Dir(path)
	for d := dir; ; {
		fi, err := os.Stat(d)
		switch {
		case errors.Is(err, fs.ErrNotExist) && filepath.Dir(d) != d:
			d = filepath.Dir(d)
			continue
		case err != nil:
			return fmt.Errorf("socket directory: %w", err)
		case !fi.IsDir():
			return fmt.Errorf("%s is not a directory, so the socket %s cannot be made; set HEARTH_SOCKET to a path in a directory", d, path)
		}
		if err := writable(d); err == nil {
			return nil
		} else if d == dir {
			return fmt.Errorf("the socket directory %s is not writable (%v): set HEARTH_SOCKET to a path in a directory you can write, or give yourself write access to it", d, err)
		} else {
			return fmt.Errorf("the socket directory %s cannot be created: %s is not writable (%v); set HEARTH_SOCKET to a path in a directory you can write, or create it (mkdir -m 700 %s)", dir, d, err, dir)
		}
	}
}
