package rpc

import (
	"context"
	"io"

	"go.lsp.dev/jsonrpc2"
)

// ServeConn serves one accepted connection: it detects the framing
// (NewServerStream, blocking until the peer's first bytes), wraps the stream
// in a jsonrpc2.Conn and starts dispatching to h (usually Mux.Handler). The
// returned Conn lives until the peer hangs up or Close is called; the caller
// owns it and must Close it (Close waits for running handlers).
//
// Handlers run under a context that carries the Conn (ConnFromContext) and is
// cancelled as soon as the connection's read side ends: jsonrpc2 itself does
// not cancel running handlers when the peer goes away, so without this an
// async session/prompt would run on, and Close would wait for it.
func ServeConn(ctx context.Context, rwc io.ReadWriteCloser, h jsonrpc2.Handler, maxMessage int) (jsonrpc2.Conn, Framing, error) {
	conn, _, framing, err := serveConn(ctx, rwc, h, maxMessage)
	return conn, framing, err
}

// serveConn is ServeConn, also returning the stream.
func serveConn(ctx context.Context, rwc io.ReadWriteCloser, h jsonrpc2.Handler, maxMessage int) (jsonrpc2.Conn, *wireStream, Framing, error) {
	stream, framing, err := NewServerStream(rwc, maxMessage)
	if err != nil {
		return nil, nil, 0, err
	}
	ws := stream.(*wireStream)
	ctx, cancel := context.WithCancel(ctx)
	conn := jsonrpc2.NewConn(stream)
	conn.Go(WithConn(ctx, conn), h)
	go func() {
		defer cancel()
		select {
		case <-ws.readDone:
		case <-conn.Done():
		}
	}()
	return conn, ws, framing, nil
}
