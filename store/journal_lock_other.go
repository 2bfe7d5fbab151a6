//go:build !unix

package store

import "os"

// lockFile: without flock nothing says which process journals a database,
// so none does; writes commit directly.
func lockFile(*os.File) bool { return false }
