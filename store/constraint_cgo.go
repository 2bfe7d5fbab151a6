//go:build cgo

package store

import (
	"database/sql"
	"errors"

	"github.com/mattn/go-sqlite3"
)

// isForeignKey and isPrimaryKey report SQLite constraint violations.
func isForeignKey(err error) bool { return isConstraint(err, sqlite3.ErrConstraintForeignKey) }
func isPrimaryKey(err error) bool { return isConstraint(err, sqlite3.ErrConstraintPrimaryKey) }

func isConstraint(err error, code sqlite3.ErrNoExtended) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.ExtendedCode == code
}

// corruption finds SQLite's "file is not a database" or "database disk
// image is malformed" in err and returns SQLite's words for it.
func corruption(err error) (string, bool) {
	var se sqlite3.Error
	if errors.As(err, &se) && (se.Code == sqlite3.ErrNotADB || se.Code == sqlite3.ErrCorrupt) {
		return se.Error(), true
	}
	return "", false
}

// failure finds in err an SQLite error that is the database failing
// rather than the statement (see IsFailure), and returns SQLite's words.
func failure(err error) (string, bool) {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return "", false
	}
	switch se.Code {
	case sqlite3.ErrCorrupt, sqlite3.ErrNotADB, sqlite3.ErrIoErr, sqlite3.ErrFull, sqlite3.ErrCantOpen,
		sqlite3.ErrReadonly, sqlite3.ErrPerm, sqlite3.ErrBusy, sqlite3.ErrLocked, sqlite3.ErrNoLFS, sqlite3.ErrProtocol:
		return se.Error(), true
	}
	return "", false
}

// writerDriver opens the writer's connections: like "sqlite3", but with
// SQLite's automatic checkpoint off, because the checkpointer does it off
// the write path (checkpoint.go).
const writerDriver = "sqlite3-hearth-writer"

func init() {
	sql.Register(writerDriver, &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		_, err := c.Exec(`PRAGMA wal_autocheckpoint = 0`, nil)
		return err
	}})
}
