package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// privateTmpDir is the directory commands of the workspace at root see as
// /tmp (and $TMPDIR): $TMPDIR/hearth-UID/tmp/HASH, HASH naming root, made
// 0700 if need be. Every level is checked to be a directory of this user's,
// not a link, and left 0700, so no other user can plant or read anything
// there. Once made, only the last level is looked at again (each command
// asks): the levels above are this user's 0700 directories, which no
// other user can change.
func privateTmpDir(root string) (string, error) {
	key := os.TempDir() + "\x00" + root
	if v, ok := madeTmpDirs.Load(key); ok {
		if dir := v.(string); ownPrivateDir(dir) {
			return dir, nil
		}
	}
	dir, err := makePrivateTmpDir(root)
	if err == nil {
		madeTmpDirs.Store(key, dir)
	}
	return dir, err
}

// madeTmpDirs maps a temp dir and a workspace root to the private /tmp
// made for it.
var madeTmpDirs sync.Map

// ownPrivateDir reports whether dir is still a directory (not a link) of
// this user's, 0700.
func ownPrivateDir(dir string) bool {
	var st unix.Stat_t
	return unix.Lstat(dir, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR &&
		int(st.Uid) == os.Getuid() && st.Mode&0o777 == 0o700
}

// makePrivateTmpDir makes and checks every level of root's private /tmp.
func makePrivateTmpDir(root string) (string, error) {
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
