//go:build !linux

package sandbox

import "io/fs"

// changeTime is fi's modification time here: hearth reads ctime on Linux
// only (planted_stamp_linux.go).
func changeTime(fi fs.FileInfo) int64 { return fi.ModTime().UnixNano() }
