//go:build !cgo

package store

// Without cgo go-sqlite3 cannot open a database at all (Open fails with its
// own message), so no constraint error can reach these; they exist so that
// cross-builds of the CLI compile.
func isForeignKey(error) bool         { return false }
func isPrimaryKey(error) bool         { return false }
func corruption(error) (string, bool) { return "", false }
func failure(error) (string, bool)    { return "", false }

// writerDriver is go-sqlite3's own: without cgo it refuses to open.
const writerDriver = "sqlite3"
