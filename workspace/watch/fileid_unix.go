//go:build unix

package watch

import (
	"io/fs"
	"syscall"
)

// fileID returns fi's inode number, which survives a rename: the watcher
// pairs a deleted path with a created one by it.
func fileID(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
