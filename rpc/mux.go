package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// CallFunc handles a call; it is registered for the Mux's life. params is nil when the request had none; it is
// valid until the function returns (copy what you keep). A non-nil error is
// mapped with WireError; a result that is not a json.RawMessage is encoded with
// Result.
type CallFunc func(ctx context.Context, params json.RawMessage) (any, error)

// NotifyFunc handles a notification; it is registered for the Mux's life. It cannot fail the connection: it has
// no error to return, and a panic is recovered and logged.
type NotifyFunc func(ctx context.Context, params json.RawMessage)

// Mux is the method dispatch table behind a jsonrpc2 connection: filled
// with Handle/HandleAsync/HandleStaged/Notification before serving, then
// only read. The daemon builds one per editor connection, its handlers
// bound to that connection's state, and drops it when the connection ends;
// a handler that needs the connection itself finds it with ConnFromContext.
//
// Rules it enforces so that no handler can take a connection down:
// unknown calls get -32601 and unknown notifications are logged and dropped;
// handler errors become JSON-RPC errors through WireError (never code 0); a
// handler panic is recovered, logged with its stack and answered with -32603;
// notification handlers cannot return errors (jsonrpc2 would close the
// connection) and their panics are logged.
type Mux struct {
	log *slog.Logger

	mu    sync.RWMutex // guards calls and notes
	calls map[string]callRoute
	notes map[string]NotifyFunc
}

// callRoute is one registered call method.
type callRoute struct {
	h       CallFunc
	async   bool        // release the read loop before running h
	prepare PrepareFunc // staged: prepare on the read loop, then run released
}

// PrepareFunc is the first stage of a staged call: it runs on the read loop,
// in wire order with everything else the client sends, and returns the
// second stage, which runs after the read loop is released. A notification
// that follows the call on the wire (session/cancel after session/prompt)
// is therefore guaranteed to see what the first stage set up.
type PrepareFunc func(ctx context.Context, params json.RawMessage) (run func(ctx context.Context) (any, error), err error)

// NewMux returns an empty Mux logging to log (nil discards).
func NewMux(log *slog.Logger) *Mux {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Mux{log: log, calls: map[string]callRoute{}, notes: map[string]NotifyFunc{}}
}

// Handle registers h for calls to method. h runs on the connection's read
// loop: calls are served one at a time in wire order and the next message is
// not read until h returns, so h must be quick and must not make calls back to
// the client (use HandleAsync for those). h must not call jsonrpc2.Async
// itself: its params would then be read from a recycled buffer.
func (m *Mux) Handle(method string, h CallFunc) {
	m.register(method, callRoute{h: h})
}

// HandleAsync registers h for calls to method and releases the read loop
// before running it (jsonrpc2.Async), so the connection keeps serving while h
// runs: a session/cancel can arrive during a session/prompt, and h can make
// calls back to the client (session/request_permission) without deadlocking.
// params is an owned copy, valid until h returns.
func (m *Mux) HandleAsync(method string, h CallFunc) {
	m.register(method, callRoute{h: h, async: true})
}

// HandleStaged registers a two-stage call: prepare runs on the read loop
// (decode, validate, claim resources), then the returned function runs
// concurrently like a HandleAsync handler. An error from prepare is the
// call's answer and nothing runs concurrently.
func (m *Mux) HandleStaged(method string, prepare PrepareFunc) {
	m.register(method, callRoute{prepare: prepare})
}

func (m *Mux) register(method string, r callRoute) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls[method] = r
}

// Notification registers h for notifications of method. h runs on the read
// loop, in wire order, and must be quick. A call (with an id) to a method that
// is only registered as a notification runs h and is answered with null, for
// clients that send session/cancel as a request.
func (m *Mux) Notification(method string, h NotifyFunc) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.notes[method] = h
}

// Methods returns every registered method name, sorted.
func (m *Mux) Methods() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	names := make([]string, 0, len(m.calls)+len(m.notes))
	for name := range m.calls {
		names = append(names, name)
	}
	for name := range m.notes {
		if _, dup := m.calls[name]; !dup {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// Handler returns the jsonrpc2.Handler that dispatches through m. Pass it to
// jsonrpc2.Conn.Go; it is safe for any number of connections at once.
func (m *Mux) Handler() jsonrpc2.Handler {
	return m.serve
}

// serve is the jsonrpc2.Handler. It never returns a non-nil error for a
// notification, and for a call only a *jsonrpc2.Error.
func (m *Mux) serve(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	m.mu.RLock()
	route, isCall := m.calls[req.Method()]
	note, isNote := m.notes[req.Method()]
	m.mu.RUnlock()

	if !req.IsCall() {
		if !isNote {
			m.log.Debug("rpc: dropping notification for unknown method", "method", req.Method())
			return nil, nil
		}
		m.notify(ctx, req.Method(), json.RawMessage(req.Params()), note)
		return nil, nil
	}

	switch {
	case isCall && route.prepare != nil:
		// The method name borrows the frame's buffer, which the read loop
		// reuses once staged releases it: the second stage (and its error
		// log) needs an owned copy. Params are only read before the release.
		return reply(m.staged(ctx, strings.Clone(req.Method()), json.RawMessage(req.Params()), route.prepare))
	case isCall:
		if route.async {
			// Release first: Async clones the borrowed method and params in
			// place, so both must be read from req after this.
			jsonrpc2.Async(ctx)
		}
		result, err := m.call(ctx, req.Method(), json.RawMessage(req.Params()), route.h)
		return reply(result, err)
	case isNote:
		m.notify(ctx, req.Method(), json.RawMessage(req.Params()), note)
		return nil, nil
	default:
		return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "method not found: %q", req.Method())
	}
}

// staged runs prepare on the read loop, then releases it and runs the
// second stage. method must be owned (not borrowed from the frame): it is
// used after the release.
func (m *Mux) staged(ctx context.Context, method string, params json.RawMessage, prepare PrepareFunc) (any, error) {
	var run func(context.Context) (any, error)
	_, err := m.call(ctx, method, params, func(ctx context.Context, params json.RawMessage) (any, error) {
		var err error
		run, err = prepare(ctx, params)
		return nil, err
	})
	if err != nil {
		return nil, err
	}
	jsonrpc2.Async(ctx)
	return m.call(ctx, method, nil, func(ctx context.Context, _ json.RawMessage) (any, error) { return run(ctx) })
}

// call runs h, turning a panic into an internal error.
func (m *Mux) call(ctx context.Context, method string, params json.RawMessage, h CallFunc) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			m.log.Error("rpc: handler panicked", "method", method, "panic", p, "stack", string(debug.Stack()))
			result, err = nil, fmt.Errorf("%w: handler for %s panicked: %v", ErrInternal, method, p)
		}
	}()
	result, err = h(ctx, params)
	if err != nil {
		if wire := WireError(err); wire.Code == jsonrpc2.InternalError {
			m.log.Error("rpc: call failed", "method", method, "err", err)
		}
	}
	return result, err
}

// notify runs h, logging a panic instead of letting it reach jsonrpc2.
func (m *Mux) notify(ctx context.Context, method string, params json.RawMessage, h NotifyFunc) {
	defer func() {
		if p := recover(); p != nil {
			m.log.Error("rpc: notification handler panicked", "method", method, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	h(ctx, params)
}

// reply converts a handler's return values into what jsonrpc2 sends: a
// *jsonrpc2.Error, or a result encoded with encoding/json v1.
func reply(result any, err error) (any, error) {
	if err != nil {
		return nil, WireError(err)
	}
	switch r := result.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return r, nil
	case jsonrpc2.RawMessage:
		return json.RawMessage(r), nil
	}
	raw, err := Result(result)
	if err != nil {
		return nil, WireError(fmt.Errorf("%w: %w", ErrInternal, err))
	}
	return raw, nil
}
