package sandbox

import (
	"io/fs"
	"syscall"
)

// changeTime is fi's ctime in nanoseconds: a rename, chmod or write moves
// it, which the modification time does not show for a directory moved in
// whole. The modification time where it is not available.
func changeTime(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return fi.ModTime().UnixNano()
}
