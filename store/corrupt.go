package store

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// ErrCorrupt is matched (errors.Is) by the error of Open when the file is
// not an SQLite database or SQLite finds it damaged.
var ErrCorrupt = errors.New("store: database damaged")

// CorruptError is Open's error for a damaged database file: it names the
// file and the command that moves it (and its -wal and -shm companions)
// aside, after which hearth starts a new database. Created per failed Open.
type CorruptError struct {
	Path   string
	Reason string // SQLite's words
	Err    error  // the whole failure
	// Companions are the -wal and -shm files that were next to it.
	Companions []string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("store: %s is damaged (%v); move it aside: %s — hearth then starts a new, empty database, and the moved file keeps the old sessions for recovery",
		e.Path, e.Reason, e.MoveAside())
}

// MoveAside is the shell command that moves the database and its
// companions to PATH.corrupt (PATH.corrupt-wal, …), which SQLite tools open
// as one database again.
func (e *CorruptError) MoveAside() string {
	cmds := []string{"mv " + shellQuote(e.Path) + " " + shellQuote(e.Path+".corrupt")}
	for _, c := range e.Companions {
		suffix := strings.TrimPrefix(c, e.Path)
		cmds = append(cmds, "mv "+shellQuote(c)+" "+shellQuote(e.Path+".corrupt"+suffix))
	}
	return strings.Join(cmds, " && ")
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// corrupt wraps err in a *CorruptError when SQLite says path is not a
// database or is damaged, and returns nil otherwise.
func corrupt(path string, err error) *CorruptError {
	reason, ok := corruption(err)
	if !ok {
		return nil
	}
	e := &CorruptError{Path: path, Reason: reason, Err: err}
	for _, c := range []string{path + "-wal", path + "-shm"} {
		if _, err := os.Stat(c); err == nil {
			e.Companions = append(e.Companions, c)
		}
	}
	return e
}

// shellQuote quotes s for a POSIX shell when it holds anything but the
// characters no shell treats specially.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-+:@%,=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
