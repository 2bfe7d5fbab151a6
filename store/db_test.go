package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// openTest opens a fresh database in a temporary directory, closed at the
// end of the test.
func openTest(t testing.TB) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	return db
}

// newSession creates a session with the given id in the workspace at root.
func newSession(t testing.TB, db *DB, root, id string) {
	t.Helper()
	if err := db.CreateSession(context.Background(), Session{ID: id, Root: root, Mode: "code", Model: "gpt-test"}); err != nil {
		t.Fatal(err)
	}
}

// userVersion reads PRAGMA user_version through db (the writer's
// connection, or a database opened raw).
func userVersion(t *testing.T, db interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) int {
	t.Helper()
	var v int
	if err := db.QueryRowContext(context.Background(), `PRAGMA user_version`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOpenReopenKeepsData(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hearth.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if db.Path() != path {
		t.Errorf("Path() = %q, want %q", db.Path(), path)
	}
	newSession(t, db, "/src/app", "s1")
	if _, err := db.Items().Append(ctx, "s1", 0, []NewItem{{Origin: OriginInput, Data: []byte(`{"type":"message"}`)}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = Open(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db.Close()
	s, err := db.Session(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if s.Root != "/src/app" || s.Mode != "code" || s.Model != "gpt-test" {
		t.Errorf("session after reopen = %+v", s)
	}
	items, err := db.Items().List(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || string(items[0].Data) != `{"type":"message"}` {
		t.Errorf("items after reopen = %+v", items)
	}
	ms, err := loadMigrations(migrations)
	if err != nil {
		t.Fatal(err)
	}
	if v := userVersion(t, db.wconn); v != len(ms) {
		t.Errorf("user_version = %d, want %d", v, len(ms))
	}
}

func TestPermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "hearth")
	path := filepath.Join(dir, "hearth.db")
	db := mustOpen(t, path)
	newSession(t, db, "/src/app", "s1") // make sure the WAL has content

	checkMode(t, dir, 0o700)
	checkMode(t, filepath.Dir(dir), 0o700)
	checkMode(t, path, 0o600)
	// In WAL mode both companions exist while the database is open.
	checkMode(t, path+"-wal", 0o600)
	checkMode(t, path+"-shm", 0o600)
}

// TestConnectionSettings checks the DSN took effect: WAL, foreign keys and
// synchronous=NORMAL on the writer; readers cannot write.
func TestConnectionSettings(t *testing.T) {
	db := openTest(t)
	var mode string
	var fk, sync, busy int
	if err := db.wconn.QueryRowContext(context.Background(), `PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if err := db.wconn.QueryRowContext(context.Background(), `PRAGMA foreign_keys`).Scan(&fk); err != nil {
		t.Fatal(err)
	}
	if err := db.wconn.QueryRowContext(context.Background(), `PRAGMA synchronous`).Scan(&sync); err != nil {
		t.Fatal(err)
	}
	if err := db.wconn.QueryRowContext(context.Background(), `PRAGMA busy_timeout`).Scan(&busy); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" || fk != 1 || sync != 1 || busy != 5000 {
		t.Errorf("writer: journal_mode=%s foreign_keys=%d synchronous=%d busy_timeout=%d", mode, fk, sync, busy)
	}
	if _, err := db.reader.Exec(`INSERT INTO workspaces (root, created) VALUES ('/r', 0)`); err == nil {
		t.Error("a reader connection wrote to the database")
	}
}

func TestOpenTightensExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hearth.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	mustOpen(t, path)
	checkMode(t, path, 0o600)
}

func mustOpen(t *testing.T, path string) *DB {
	t.Helper()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s: mode %o, want %o", path, got, want)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hearth.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.wconn.ExecContext(context.Background(), `PRAGMA user_version = 999`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = Open(path)
	if err == nil {
		db.Close()
		t.Fatal("Open accepted a database from a newer hearth")
	}
	if !strings.Contains(err.Error(), "newer than this hearth knows") {
		t.Errorf("error = %v, want a clear newer-schema message", err)
	}
}

// rawDB opens path without the store, for tests that poke at the file.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	raw, err := sql.Open("sqlite3", dsn(path, "_busy_timeout=5000&_txlock=immediate"))
	if err != nil {
		t.Fatal(err)
	}
	raw.SetMaxOpenConns(1)
	t.Cleanup(func() { raw.Close() })
	return raw
}

func TestMigrateStepsAndIdempotence(t *testing.T) {
	ctx := context.Background()
	raw := rawDB(t, filepath.Join(t.TempDir(), "m.db"))
	v1 := fstest.MapFS{
		"migrations/0001_a.sql": {Data: []byte(`CREATE TABLE a (x INTEGER);`)},
	}
	if err := migrate(ctx, raw, v1); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO a VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	// Re-running the same set is a no-op: 0001 would fail if re-applied.
	if err := migrate(ctx, raw, v1); err != nil {
		t.Fatalf("second migrate: %v", err)
	}
	v2 := fstest.MapFS{
		"migrations/0001_a.sql": v1["migrations/0001_a.sql"],
		"migrations/0002_b.sql": {Data: []byte("CREATE TABLE b (y TEXT);\nINSERT INTO b VALUES ('z');")},
	}
	if err := migrate(ctx, raw, v2); err != nil {
		t.Fatal(err)
	}
	if v := userVersion(t, raw); v != 2 {
		t.Errorf("user_version = %d, want 2", v)
	}
	var n int
	if err := raw.QueryRow(`SELECT (SELECT count(*) FROM a) + (SELECT count(*) FROM b)`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("rows = %d, want 2 (data kept, 0002 applied once)", n)
	}
}

func TestMigrateIsOneTransaction(t *testing.T) {
	ctx := context.Background()
	raw := rawDB(t, filepath.Join(t.TempDir(), "m.db"))
	bad := fstest.MapFS{
		"migrations/0001_a.sql": {Data: []byte(`CREATE TABLE a (x INTEGER);`)},
		"migrations/0002_b.sql": {Data: []byte(`CREATE TABLE b (y TEXT); THIS IS NOT SQL;`)},
	}
	if err := migrate(ctx, raw, bad); err == nil {
		t.Fatal("migrate succeeded with a broken step")
	}
	if v := userVersion(t, raw); v != 0 {
		t.Errorf("user_version = %d after failed migration, want 0", v)
	}
	var n int
	if err := raw.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'table'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d tables left by a failed migration, want 0", n)
	}
}

func TestLoadMigrationsRejectsGaps(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"gap": {
			"migrations/0001_a.sql": {Data: []byte(`SELECT 1;`)},
			"migrations/0003_c.sql": {Data: []byte(`SELECT 1;`)},
		},
		"duplicate": {
			"migrations/0001_a.sql": {Data: []byte(`SELECT 1;`)},
			"migrations/0001_b.sql": {Data: []byte(`SELECT 1;`)},
		},
		"bad name": {
			"migrations/init.sql": {Data: []byte(`SELECT 1;`)},
		},
	} {
		if _, err := loadMigrations(fsys); err == nil {
			t.Errorf("%s: loadMigrations accepted it", name)
		}
	}
}

func TestIntegrityCheck(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	newSession(t, db, "/src/app", "s1")
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Fatalf("fresh database: %v", err)
	}

	// A row written with foreign keys off must be reported.
	raw := rawDB(t, db.Path())
	if _, err := raw.Exec(`INSERT INTO turns (session_id, seq, status, started) VALUES ('ghost', 1, 'running', 0)`); err != nil {
		t.Fatal(err)
	}
	err := db.IntegrityCheck(ctx)
	if err == nil || !strings.Contains(err.Error(), "turns") {
		t.Errorf("IntegrityCheck = %v, want a problem in turns", err)
	}
}

func TestCloseWaitsForCalls(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hearth.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	inCall, release := make(chan struct{}), make(chan struct{})
	callDone := make(chan error)
	go func() {
		callDone <- db.write(context.Background(), func(tx *wtx) error {
			close(inCall)
			<-release
			_, err := tx.ExecContext(context.Background(), `INSERT INTO workspaces (root, created) VALUES ('/late', 1)`)
			return err
		})
	}()
	<-inCall
	closed := make(chan error)
	go func() { closed <- db.Close() }()

	// Wait until Close has begun (new calls refused), without sleeping.
	for {
		done, err := db.enter()
		if err != nil {
			break
		}
		done()
		runtime.Gosched()
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a call was in flight", err)
	default:
	}
	close(release)
	if err := <-callDone; err != nil {
		t.Fatalf("in-flight call: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if _, err := db.EnsureWorkspace(context.Background(), "/x"); !errors.Is(err, ErrClosed) {
		t.Errorf("call after Close: %v, want ErrClosed", err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	db = mustOpen(t, path)
	if _, err := db.Sessions(context.Background(), "", 0); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.reader.QueryRow(`SELECT count(*) FROM workspaces WHERE root = '/late'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("write in flight at Close: count=%d err=%v, want committed", n, err)
	}
}

func TestDSNEscapesPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "odd?name#with%25")
	db := mustOpen(t, filepath.Join(path, "hearth.db"))
	newSession(t, db, "/r", "s")
	// Open creates the file itself, so an unescaped DSN would show as an
	// empty file here and a stray one elsewhere.
	fi, err := os.Stat(filepath.Join(path, "hearth.db"))
	if err != nil || fi.Size() == 0 {
		t.Errorf("database not written at the requested path: %v", err)
	}
}

// TestWriteRollsBackAfterPanic: a panic inside a write transaction leaves
// nothing of it behind, and the writer's connection takes the next write.
func TestWriteRollsBackAfterPanic(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the panic did not reach the caller")
			}
		}()
		db.write(ctx, func(tx *wtx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO workspaces (root, created) VALUES ('/panicked', 1)`); err != nil {
				t.Error(err)
			}
			panic("in the transaction")
		})
	}()
	next := make(chan error, 1)
	go func() {
		next <- db.write(ctx, func(tx *wtx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO workspaces (root, created) VALUES ('/next', 1)`)
			return err
		})
	}()
	select {
	case err := <-next:
		if err != nil {
			t.Fatalf("the write after the panic: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the write after the panic did not run in 10 s: the writer is stuck")
	}
	var roots []string
	rows, err := db.reader.QueryContext(ctx, `SELECT root FROM workspaces ORDER BY root`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			t.Fatal(err)
		}
		roots = append(roots, r)
	}
	if !slices.Equal(roots, []string{"/next"}) {
		t.Fatalf("workspaces %q, want only /next", roots)
	}
}
