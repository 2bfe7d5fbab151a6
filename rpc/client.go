package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// ClientOptions configures a Client; NewClient copies it, so it is read
// once and the functions it holds live as long as the Client.
type ClientOptions struct {
	// OnNotify receives every notification from the server (session/update
	// above all) in wire order. It runs on the client's read goroutine, so
	// ordering is exact, but while it runs no further message — notification
	// or reply — is read: it must be quick (hand work to a goroutine or a
	// buffered channel). params is a copy the function may keep. Nil drops
	// notifications.
	OnNotify func(method string, params json.RawMessage)

	// OnCall answers calls from the server, such as
	// session/request_permission. It runs on its own goroutine (the read loop
	// keeps going), so it may block, for example on a user's answer, until ctx
	// is done; ctx is cancelled when the Client closes. Its result is encoded
	// with encoding/json v1 and its error mapped with WireError. Nil answers
	// every call with -32601 method not found.
	OnCall func(ctx context.Context, method string, params json.RawMessage) (any, error)

	// Logger receives panics recovered from OnNotify and OnCall. Nil discards.
	Logger *slog.Logger
}

// Client is a typed JSON-RPC client of the hearth daemon over one connection,
// used by the CLI (hearth status, hearth ask), the stdio relay and tests. It
// lives from NewClient or Dial until Close, or until the server hangs up (see
// Done). Its methods are safe for concurrent use.
type Client struct {
	stream jsonrpc2.Stream
	conn   jsonrpc2.Conn
	opts   ClientOptions
	log    *slog.Logger
	cancel context.CancelFunc // cancels the context OnCall runs under

	closeOnce sync.Once
	closeErr  error
}

// Dial connects to the daemon's unix socket at socketPath and returns a
// Client over it. ctx bounds the dial only.
func Dial(ctx context.Context, socketPath string) (*Client, error) {
	return DialOptions(ctx, socketPath, ClientOptions{})
}

// DialOptions is Dial with options (notification and server-call handlers).
func DialOptions(ctx context.Context, socketPath string, opts ClientOptions) (*Client, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", socketPath)
	if err != nil {
		return nil, fmt.Errorf("connect to hearth daemon at %s: %w", socketPath, err)
	}
	return NewClient(conn, opts), nil
}

// NewClient returns a Client speaking newline-delimited JSON over conn, which
// it owns: Close closes it.
func NewClient(conn io.ReadWriteCloser, opts ClientOptions) *Client {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stream := NewClientStream(conn)
	c := &Client{
		stream: stream,
		conn:   jsonrpc2.NewConn(stream),
		opts:   opts,
		log:    log,
		cancel: cancel,
	}
	c.conn.Go(ctx, c.handle)
	return c
}

// Call calls method with params and decodes the reply into result (see the
// package function Call: encoding/json v1 both ways, nil params sends none,
// nil result discards). A JSON-RPC error reply is returned as a
// *jsonrpc2.Error. It returns when the reply arrives, ctx is done, or the
// connection ends, whichever is first: give ctx a deadline when the server
// may not answer.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	return Call(ctx, c.conn, method, params, result)
}

// Notify sends a notification of method with params (encoding/json v1).
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	return Notify(ctx, c.conn, method, params)
}

// Done is closed once the connection has ended (Close, or the server hung up)
// and the read goroutine has exited.
func (c *Client) Done() <-chan struct{} {
	return c.conn.Done()
}

// Err reports why the connection ended: nil for a clean close or hang-up.
func (c *Client) Err() error {
	return c.conn.Err()
}

// Close ends the connection and waits for the read goroutine. It does not
// wait for replies: the connection is closed first, so pending Calls return
// an error at once, and OnCall's ctx is cancelled. It is idempotent.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.cancel()
		serr := c.stream.Close() // unblocks the read loop; pending Calls fail
		cerr := c.conn.Close()   // waits for the read loop and OnCall handlers
		c.closeErr = errors.Join(serr, cerr)
	})
	return c.closeErr
}

// handle is the connection's jsonrpc2.Handler: server notifications and calls.
func (c *Client) handle(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	if !req.IsCall() {
		if c.opts.OnNotify != nil {
			c.deliverNotification(req.Method(), bytes.Clone(req.Params()))
		}
		return nil, nil
	}
	if c.opts.OnCall == nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "method not found: %q (this client answers no calls)", req.Method())
	}
	jsonrpc2.Async(ctx) // OnCall may block; keep reading. Clones req in place.
	result, err := c.answerCall(ctx, req.Method(), json.RawMessage(req.Params()))
	return reply(result, err)
}

// deliverNotification runs OnNotify, logging a panic.
func (c *Client) deliverNotification(method string, params json.RawMessage) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("rpc: OnNotify panicked", "method", method, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	c.opts.OnNotify(method, params)
}

// answerCall runs OnCall, turning a panic into an internal error.
func (c *Client) answerCall(ctx context.Context, method string, params json.RawMessage) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("rpc: OnCall panicked", "method", method, "panic", p, "stack", string(debug.Stack()))
			result, err = nil, fmt.Errorf("%w: client handler for %s panicked: %v", ErrInternal, method, p)
		}
	}()
	return c.opts.OnCall(ctx, method, params)
}
