// Package storetest damages a hearth database the way a failing disk does,
// for tests of what hearth says then: one table's root page overwritten with
// garbage, the file's header and schema left whole, so that the database
// still opens. Imported by tests only.
package storetest

import (
	"bytes"
	"database/sql"
	"os"
	"testing"

	_ "github.com/mattn/go-sqlite3" // the "sqlite3" database/sql driver
)

// Damage overwrites the root page of table in the database at path (open
// in a daemon or not) with garbage. The log is folded into the file first,
// so the page read afterwards is the damaged one; a write to the log after
// the damage makes every connection drop the pages it cached.
func Damage(tb testing.TB, path, table string) {
	tb.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		tb.Fatalf("storetest: checkpoint %s: %v", path, err)
	}
	var root, size int64
	if err := db.QueryRow(`SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(&root); err != nil {
		tb.Fatalf("storetest: table %s: %v", table, err)
	}
	if err := db.QueryRow(`PRAGMA page_size`).Scan(&size); err != nil {
		tb.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		tb.Fatal(err)
	}
	// 0xA5 is no b-tree page type: SQLite calls the page malformed.
	_, err = f.WriteAt(bytes.Repeat([]byte{0xA5}, int(size)), (root-1)*size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE storetest_touch (x); DROP TABLE storetest_touch`); err != nil {
		tb.Fatalf("storetest: touch the log of %s: %v", path, err)
	}
}
