// Package store is hearth's SQLite persistence: workspaces, sessions, turns,
// the transcript items exactly as exchanged with the model, the request log
// and the per-session read set. Everything here must survive a crash of the
// daemon; secrets (the API key) never enter the database, and no table has a
// column that could hold one.
//
// All writes go through one connection, held for the database's life, in
// BEGIN IMMEDIATE transactions taken one at a time, so concurrent writers
// queue inside the process instead of failing with "database is locked";
// reads use a separate pool of query-only connections that WAL mode lets run
// alongside the writer.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/mattn/go-sqlite3" // the "sqlite3" database/sql driver
)

// ErrNotFound is wrapped by lookups and updates of unknown ids.
var ErrNotFound = errors.New("store: not found")

// ErrClosed is returned by calls made after Close has begun.
var ErrClosed = errors.New("store: database closed")

// readers is the size of the reader pool: enough for the handful of
// sessions a daemon serves at once without holding many file descriptors.
const readers = 4

// DB is hearth's database. It is opened once by the daemon at start (Open)
// and lives until shutdown (Close); it is safe for concurrent use.
type DB struct {
	path   string
	writer *sql.DB    // one connection, wconn: SQLite allows one writer anyway
	wconn  *sql.Conn  // writer's only connection, held from Open to Close
	wmu    sync.Mutex // held by a write transaction on wconn; guards stmts
	reader *sql.DB    // query-only pool

	// mu guards closed and the Add side of calls, so that Close can wait
	// for every call that started before it.
	mu     sync.Mutex
	closed bool
	calls  sync.WaitGroup

	// perms keeps each session's remembered permissions once read
	// (Memory.Permissions): every approval asks for them, and they change
	// only through SetPermission. permMu orders a fill after any change.
	permMu sync.Mutex
	perms  map[string]map[string]Decision

	commits atomic.Int64 // write transactions committed
	stmts   statements   // wconn's prepared statements
	ckpt    *checkpointer
}

// Commits is the number of write transactions committed since Open: each
// is a write to the log on disk, the cost a model round trip keeps low.
func (db *DB) Commits() int64 { return db.commits.Load() }

// Items returns the sessions' transcripts: items and turns.
func (db *DB) Items() Items { return Items{db} }

// Requests returns the request log and the commits made ahead of requests.
func (db *DB) Requests() Requests { return Requests{db} }

// Branches returns the sessions' compactions, rewinds and forks.
func (db *DB) Branches() Branches { return Branches{db} }

// Memory returns the sessions' read sets and remembered permissions.
func (db *DB) Memory() Memory { return Memory{db} }

// Rules returns the workspaces' kept "always allow" rules.
func (db *DB) Rules() Rules { return Rules{db} }

// Open opens (creating if needed) the database at path and brings its
// schema up to date. The parent directory is created 0700 if missing and
// the database file (with its -wal and -shm companions) is kept 0600: the
// transcript holds the user's code.
func Open(path string) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := createFile(abs); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", abs, err)
	}
	ctx := context.Background()
	writer, err := openWriter(ctx, abs)
	if err != nil {
		return nil, err
	}
	reader, err := openReaders(ctx, abs)
	if err != nil {
		writer.Close()
		return nil, err
	}
	for _, companion := range []string{abs + "-wal", abs + "-shm"} {
		if err := os.Chmod(companion, 0o600); err != nil && !errors.Is(err, os.ErrNotExist) {
			reader.Close()
			writer.Close()
			return nil, fmt.Errorf("store: open %s: %w", abs, err)
		}
	}
	// The checkpointer's connection may write (a checkpoint writes the
	// database file) but runs no statement that changes data.
	ckpt, err := sql.Open("sqlite3", dsn(abs, "_busy_timeout=5000"))
	if err != nil {
		reader.Close()
		writer.Close()
		return nil, fmt.Errorf("store: open %s: checkpointer: %w", abs, err)
	}
	ckpt.SetMaxOpenConns(1)
	ckpt.SetMaxIdleConns(1)
	// The writer's only connection is held for the DB's life: transactions
	// are BEGIN and COMMIT on it (write).
	wconn, err := writer.Conn(ctx)
	if err != nil {
		ckpt.Close()
		reader.Close()
		writer.Close()
		return nil, fmt.Errorf("store: open %s: writer: %w", abs, err)
	}
	return &DB{path: abs, writer: writer, wconn: wconn, reader: reader, ckpt: newCheckpointer(ckpt)}, nil
}

// createFile creates the database file and its directory (0700) ourselves,
// so SQLite never creates it with umask permissions, and tightens a file
// someone else created to 0600.
func createFile(abs string) error {
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return fmt.Errorf("create directory: %w", err)
	}
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	return os.Chmod(abs, 0o600)
}

// openWriter opens the writer's pool of one connection and brings the
// schema up to date.
func openWriter(ctx context.Context, abs string) (*sql.DB, error) {
	writer, err := sql.Open(writerDriver, dsn(abs,
		"_journal_mode=WAL&_busy_timeout=5000&_txlock=immediate&_foreign_keys=on&_synchronous=NORMAL"))
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", abs, err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)
	if err := migrate(ctx, writer, migrations); err != nil {
		writer.Close()
		if ce := corrupt(abs, err); ce != nil {
			return nil, ce
		}
		return nil, fmt.Errorf("store: open %s: %w", abs, err)
	}
	return writer, nil
}

// openReaders opens the reader pool. Readers are opened after the writer
// has switched the file to WAL (a persistent setting), so they never need
// to write to set it. They use _query_only rather than mode=ro: a read-only
// open of a WAL database fails when it would have to create the -shm file.
func openReaders(ctx context.Context, abs string) (*sql.DB, error) {
	reader, err := sql.Open("sqlite3", dsn(abs, "_busy_timeout=5000&_foreign_keys=on&_query_only=1"))
	if err != nil {
		return nil, fmt.Errorf("store: open %s: readers: %w", abs, err)
	}
	reader.SetMaxOpenConns(readers)
	reader.SetMaxIdleConns(readers)
	if err := reader.PingContext(ctx); err != nil {
		reader.Close()
		if ce := corrupt(abs, err); ce != nil {
			return nil, ce
		}
		return nil, fmt.Errorf("store: open %s: readers: %w", abs, err)
	}
	return reader, nil
}

// dsn builds a go-sqlite3 URI DSN. The path is escaped because SQLite
// percent-decodes URI paths and ends them at '?' or '#'.
func dsn(path, params string) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(path))
	return "file:" + esc + "?" + params
}

// Path returns the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Close waits for the calls in flight, then closes both connection pools.
// Calls made after Close has begun fail with ErrClosed.
func (db *DB) Close() error {
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		return nil
	}
	db.closed = true
	db.mu.Unlock()
	db.calls.Wait()

	cerr := db.ckpt.close()
	db.wmu.Lock()
	db.stmts.close()
	db.wmu.Unlock()
	rerr := db.reader.Close()
	// The writer goes last: closing the last connection checkpoints the WAL.
	cwerr := db.wconn.Close()
	werr := db.writer.Close()
	if err := errors.Join(cerr, rerr, cwerr, werr); err != nil {
		return fmt.Errorf("store: close %s: %w", db.path, err)
	}
	return nil
}

// enter registers a call so Close can wait for it; the caller must call
// the returned function when done.
func (db *DB) enter() (done func(), err error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil, ErrClosed
	}
	db.calls.Add(1)
	return db.calls.Done, nil
}

// write runs fn in one immediate transaction on the writer's connection
// and commits it, or rolls everything back if fn fails.
//
// A ctx already done fails the write before it begins; once begun, the
// transaction runs to its end whatever happens to ctx, so that nothing on
// the way spawns a goroutine: go-sqlite3 runs a statement given a
// cancellable context on a goroutine of its own, and database/sql gives a
// *sql.Tx one to watch its context and another for every query in it. On
// a commit per round trip that was a handful of goroutines started and
// woken, each a thread woken on an idle machine. The transaction is BEGIN
// and COMMIT on the connection the DB holds (wconn), serialised by wmu.
// A cancelled commit would gain nothing: the callers store what must
// survive with an uncancelled context anyway.
func (db *DB) write(ctx context.Context, fn func(tx *wtx) error) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	done, err := db.enter()
	if err != nil {
		return err
	}
	defer done()
	db.wmu.Lock()
	defer db.wmu.Unlock()
	if _, err := db.wconn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			// Also after a panic in fn: the connection must not stay
			// inside a transaction.
			if _, rerr := db.wconn.ExecContext(ctx, `ROLLBACK`); rerr != nil && err != nil {
				err = fmt.Errorf("%w (and the rollback failed: %v)", err, rerr)
			}
		}
	}()
	if err := fn(&wtx{conn: db.wconn, db: db}); err != nil {
		return err
	}
	if _, err := db.wconn.ExecContext(ctx, `COMMIT`); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	committed = true
	db.commits.Add(1)
	db.ckpt.committed()
	return nil
}

// read runs fn with the reader pool, counted as a call for Close.
func (db *DB) read(fn func(r *sql.DB) error) error {
	done, err := db.enter()
	if err != nil {
		return err
	}
	defer done()
	return fn(db.reader)
}

// IntegrityCheck runs SQLite's integrity and foreign-key checks and returns
// a *CorruptError listing every problem found (or SQLite's words when the
// check itself met the damage), or nil when the database is sound.
func (db *DB) IntegrityCheck(ctx context.Context) error {
	var problems []string
	err := db.read(func(r *sql.DB) error {
		rows, err := r.QueryContext(ctx, `PRAGMA integrity_check`)
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
		if err := rows.Err(); err != nil {
			return err
		}

		fk, err := r.QueryContext(ctx, `PRAGMA foreign_key_check`)
		if err != nil {
			return err
		}
		defer fk.Close()
		for fk.Next() {
			var table, parent string
			var rowid sql.NullInt64
			var fkid int64
			if err := fk.Scan(&table, &rowid, &parent, &fkid); err != nil {
				return err
			}
			row := "a row" // WITHOUT ROWID tables report no rowid
			if rowid.Valid {
				row = fmt.Sprintf("row %d", rowid.Int64)
			}
			problems = append(problems, fmt.Sprintf("%s %s: missing %s", table, row, parent))
		}
		return fk.Err()
	})
	if ce := corrupt(db.path, err); ce != nil {
		return ce
	}
	if err != nil {
		return fmt.Errorf("store: integrity check: %w", err)
	}
	if problems = tidyProblems(problems); len(problems) > 0 {
		return damaged(db.path, "integrity check: "+strings.Join(problems, "; "), ErrCorrupt)
	}
	return nil
}

// Times are stored as INTEGER unix nanoseconds, UTC; a zero time.Time is
// stored as NULL where a column may be "not yet".

func nanos(t time.Time) int64 { return t.UnixNano() }

func nullNanos(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

func fromNullNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return fromNanos(n.Int64)
}

// now is the current time in UTC without its monotonic reading, so times
// returned by writes compare equal to the same times read back.
func now() time.Time { return time.Now().UTC().Round(0) }
