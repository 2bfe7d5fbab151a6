package rpc

import (
	"context"

	"go.lsp.dev/jsonrpc2"
)

// connKey is the context key under which WithConn stores a connection.
type connKey struct{}

// WithConn returns ctx carrying conn. Pass the result to conn.Go so every
// handler the connection runs can reach its own connection with
// ConnFromContext (for session/update notifications and
// session/request_permission calls back to the client).
func WithConn(ctx context.Context, conn jsonrpc2.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, conn)
}

// ConnFromContext returns the connection stored by WithConn, or nil.
func ConnFromContext(ctx context.Context) jsonrpc2.Conn {
	conn, _ := ctx.Value(connKey{}).(jsonrpc2.Conn)
	return conn
}
