package store

import (
	"context"
	"database/sql"
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
	var ce *CorruptError
	if errors.As(err, &ce) {
		return ce
	}
	reason, ok := corruption(err)
	if !ok {
		return nil
	}
	return damaged(path, reason, err)
}

// damaged is the *CorruptError for path, with the companions beside it.
func damaged(path, reason string, err error) *CorruptError {
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

// QuickCheck runs SQLite's quick_check — every page of every b-tree read
// and checked, but not the indexes against their tables, so it is linear in
// the file's size where integrity_check is not — within ctx (go-sqlite3
// interrupts the statement when ctx ends). It returns a *CorruptError
// naming the file, what SQLite found (its first few problems) and the fix
// when the database is damaged; an error wrapping ctx's when the check was
// cut short; nil when sound.
func (db *DB) QuickCheck(ctx context.Context) error {
	var problems []string
	err := db.read(func(r *sql.DB) error {
		rows, err := r.QueryContext(ctx, `PRAGMA quick_check(3)`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var msg string
			if err := rows.Scan(&msg); err != nil {
				return err
			}
			if msg != "ok" {
				problems = append(problems, msg)
			}
		}
		return rows.Err()
	})
	problems = tidyProblems(problems)
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("store: %s not checked: %w", db.path, ctx.Err())
	case err != nil:
		if ce := corrupt(db.path, err); ce != nil {
			return ce
		}
		return fmt.Errorf("store: check %s: %w", db.path, err)
	case len(problems) > 0:
		return damaged(db.path, "quick_check: "+strings.Join(problems, "; "), ErrCorrupt)
	}
	return nil
}

// IsFailure reports whether err is the database failing rather than a
// caller's mistake or a cancel: the file damaged or not a database, an I/O
// error, the disk full, the file read-only or unopenable, locked by another
// program past the busy timeout. The daemon reports such an error as a store
// error with Advice, never as its own bug.
func IsFailure(err error) bool {
	if errors.Is(err, ErrCorrupt) {
		return true
	}
	_, ok := failure(err)
	return ok
}

// Advice is what to do about err, a failure (IsFailure) of the database at
// path: for a damaged one, the file and the command that moves it aside;
// otherwise `hearth doctor`, which checks the file, its directory and the
// disk. "" when err is no failure of the database.
func Advice(path string, err error) string {
	if ce := corrupt(path, err); ce != nil {
		return fmt.Sprintf("the database %s is damaged: stop hearth (`hearth stop`) and move it aside: %s — hearth then starts a new, empty database, and the moved file keeps the old sessions for recovery",
			path, ce.MoveAside())
	}
	if !IsFailure(err) {
		return ""
	}
	return fmt.Sprintf("the database %s failed: `hearth doctor` checks it and says what to do", path)
}

// tidyProblems puts SQLite's check report on one line: its "*** in
// database main ***" heading dropped, its line breaks made "; ".
func tidyProblems(rows []string) []string {
	var out []string
	for _, r := range rows {
		for _, l := range strings.Split(r, "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "*** in database") {
				out = append(out, l)
			}
		}
	}
	return out
}
