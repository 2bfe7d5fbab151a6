package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// privateTmpDir is the directory commands of the workspace at root see as
// /tmp (and $TMPDIR): $TMPDIR/hearth-UID/tmp/HASH, HASH naming root, made
// 0700 if need be. Every level is checked to be a directory of this user's,
// not a link, and left 0700, so no other user can plant or read anything
// there.
func privateTmpDir(root string) (string, error) {
	dir := filepath.Clean(os.TempDir())
	for _, name := range strings.Split(PrivateTmpRel(canonical(root)), "/") {
		dir = filepath.Join(dir, name)
		if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
			return "", fmt.Errorf("make %s: %w", dir, err)
		}
		fi, err := os.Lstat(dir)
		if err != nil {
			return "", err
		}
		if !fi.IsDir() {
			return "", fmt.Errorf("%s is not a directory", dir)
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
			return "", fmt.Errorf("%s belongs to another user", dir)
		}
		if fi.Mode().Perm() != 0o700 {
			if err := os.Chmod(dir, 0o700); err != nil {
				return "", err
			}
		}
	}
	return dir, nil
}
