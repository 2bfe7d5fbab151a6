package store

import (
	"context"
	"database/sql"
)

// wtx is one write transaction on the writer's connection, alive for one
// DB.write call. Its statements ignore their context's cancellation (see
// DB.write) and are compiled once per DB and kept: the writer's connection
// lives as long as the DB, so each query text is parsed by SQLite once
// rather than on every round trip.
type wtx struct {
	conn *sql.Conn
	db   *DB
}

// maxStatements bounds the cache; every query in this package is a
// constant, so it only guards against a future dynamic one.
const maxStatements = 128

// statements holds the writer's prepared statements by query text. It lives
// as long as its DB; Close closes them. Used under DB.wmu.
type statements struct {
	m map[string]*sql.Stmt
}

// stmt returns query's statement compiled on the writer's connection,
// compiling it the first time; nil when it does not compile (the caller
// then runs the query unprepared, which reports why).
func (tx *wtx) stmt(ctx context.Context, query string) *sql.Stmt {
	st := &tx.db.stmts
	if s, ok := st.m[query]; ok {
		return s
	}
	if len(st.m) >= maxStatements {
		return nil
	}
	s, err := tx.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	if st.m == nil {
		st.m = make(map[string]*sql.Stmt)
	}
	st.m[query] = s
	return s
}

// close closes the cached statements; the connection closes after. The
// caller holds DB.wmu.
func (st *statements) close() {
	for _, s := range st.m {
		s.Close()
	}
	st.m = nil
}

// ExecContext runs query in the transaction with its cached statement.
func (tx *wtx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx = context.WithoutCancel(ctx) // see DB.write
	if s := tx.stmt(ctx, query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return tx.conn.ExecContext(ctx, query, args...)
}

// ExecOnce runs query in the transaction with a statement of its own,
// which is done with, and frees what was bound to it, when it returns: a
// cached statement keeps the values it ran with (SQLite's copies) until
// it runs again, and a value can be megabytes.
func (tx *wtx) ExecOnce(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return tx.conn.ExecContext(context.WithoutCancel(ctx), query, args...) // see DB.write
}

// QueryContext runs query in the transaction with its cached statement.
func (tx *wtx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx = context.WithoutCancel(ctx) // see DB.write
	if s := tx.stmt(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return tx.conn.QueryContext(ctx, query, args...)
}

// QueryRowContext runs query in the transaction with its cached statement.
func (tx *wtx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	ctx = context.WithoutCancel(ctx) // see DB.write
	if s := tx.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return tx.conn.QueryRowContext(ctx, query, args...)
}
