package store

import (
	"context"
	"database/sql"
	"sync"
)

// wtx is one write transaction on the writer connection, alive for one
// db.write call. Its statements ignore their context's cancellation (see
// DB.write). Its statements are compiled once per DB and kept: the
// writer has a single connection that lives as long as the DB, so each
// query text is parsed by SQLite once rather than on every round trip.
type wtx struct {
	*sql.Tx
	db *DB
}

// maxStatements bounds the cache; every query in this package is a
// constant, so it only guards against a future dynamic one.
const maxStatements = 128

// statements holds the writer's prepared statements by query text. It lives
// as long as its DB; Close closes them.
type statements struct {
	mu    sync.Mutex // guards m and noted
	m     map[string]*sql.Stmt
	noted map[string]bool // run unprepared, to be compiled after their transaction
}

// prepared returns query's statement compiled on the writer, or nil when
// it is not compiled yet: the query is then noted, to be compiled once the
// transaction has given the connection back (prepareNoted). Compiling it
// inside the transaction would wait for the writer's only connection, which
// the transaction holds.
func (db *DB) prepared(query string) *sql.Stmt {
	db.stmts.mu.Lock()
	defer db.stmts.mu.Unlock()
	if s, ok := db.stmts.m[query]; ok {
		return s
	}
	if len(db.stmts.m)+len(db.stmts.noted) < maxStatements {
		if db.stmts.noted == nil {
			db.stmts.noted = make(map[string]bool)
		}
		db.stmts.noted[query] = true
	}
	return nil
}

// prepareNoted compiles the queries noted by prepared, on the writer
// connection, between transactions. A query that fails to compile is left
// unprepared: the transactions that run it report the error.
func (db *DB) prepareNoted(ctx context.Context) {
	db.stmts.mu.Lock()
	noted := db.stmts.noted
	db.stmts.noted = nil
	db.stmts.mu.Unlock()
	for q := range noted {
		s, err := db.writer.PrepareContext(ctx, q)
		if err != nil {
			continue
		}
		db.stmts.mu.Lock()
		if db.stmts.m == nil {
			db.stmts.m = make(map[string]*sql.Stmt)
		}
		if _, dup := db.stmts.m[q]; dup {
			s.Close()
		} else {
			db.stmts.m[q] = s
		}
		db.stmts.mu.Unlock()
	}
}

// closeStatements closes the cached statements; the writer closes after.
func (db *DB) closeStatements() {
	db.stmts.mu.Lock()
	defer db.stmts.mu.Unlock()
	for _, s := range db.stmts.m {
		s.Close()
	}
	db.stmts.m, db.stmts.noted = nil, nil
}

// ExecContext runs query in the transaction with its cached statement.
func (tx *wtx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx = context.WithoutCancel(ctx) // see DB.write
	if s := tx.db.prepared(query); s != nil {
		return tx.StmtContext(ctx, s).ExecContext(ctx, args...)
	}
	return tx.Tx.ExecContext(ctx, query, args...)
}

// QueryContext runs query in the transaction with its cached statement.
func (tx *wtx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx = context.WithoutCancel(ctx) // see DB.write
	if s := tx.db.prepared(query); s != nil {
		return tx.StmtContext(ctx, s).QueryContext(ctx, args...)
	}
	return tx.Tx.QueryContext(ctx, query, args...)
}

// QueryRowContext runs query in the transaction with its cached statement.
func (tx *wtx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	ctx = context.WithoutCancel(ctx) // see DB.write
	if s := tx.db.prepared(query); s != nil {
		return tx.StmtContext(ctx, s).QueryRowContext(ctx, args...)
	}
	return tx.Tx.QueryRowContext(ctx, query, args...)
}
