package watch

import (
	"io/fs"
	"os"
)

// Dir is the workspace directory a Watcher watches and a delta reads:
// workspace.Root implements it. The watcher names files by their path
// relative to it and reads them only through OpenRegular, beneath the
// directory's handle.
type Dir interface {
	// Path is the directory's absolute path, symlinks evaluated.
	Path() string
	// Rel is abs relative to the directory, slash-separated, "." for the
	// directory itself.
	Rel(abs string) string
	// Resolve maps p, relative to the directory, to an absolute path inside
	// it, following symlinks; it fails for a path that leads outside.
	Resolve(p string) (string, error)
	// OpenRegular opens name (relative to the directory, OS separators) for
	// reading, without blocking on a FIFO. When name is not a regular file
	// it returns an error and fi describes what it is.
	OpenRegular(name string) (f *os.File, fi fs.FileInfo, err error)
}
