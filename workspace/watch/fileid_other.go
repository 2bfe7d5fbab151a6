//go:build !unix

package watch

import "io/fs"

// fileID is 0 where inode numbers are not available: renames then show as
// a delete and a create.
func fileID(fs.FileInfo) uint64 { return 0 }
