package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// The server's per-connection limits (responses-websocket.md §2).
const (
	maxActive    = 16
	maxLaneNames = 32
)

// wsConn is one Responses WebSocket. Created by dial (from Client.conn);
// lives until the server closes it, it falls out of step, or its owner
// Client drops or closes it. close waits for the reader goroutine.
type wsConn struct {
	id      string
	ws      *websocket.Conn
	created time.Time
	log     *slog.Logger

	writeMu sync.Mutex // serializes writes: gorilla allows one concurrent writer

	mu     sync.Mutex               // guards routes, owners, cache, err, names
	routes map[string]*stream       // lane → the stream that owns it now
	owners map[string]chan struct{} // lane → ownership token (cap 1): serial ownership per lane
	cache  map[string]string        // lane → latest completed response: the server's connection-local cache as we know it
	err    error                    // why the connection is dead; nil while alive
	names  map[string]bool          // lane names used on this connection (the server allows 32)

	slots     chan struct{} // active responses (the server runs 16 at once and queues the rest)
	completed atomic.Int64  // responses completed: a connection that served none is not re-warmed
	draining  atomic.Bool   // rotated out: closes when its last response ends

	last   atomic.Int64  // unix nanos of the last frame (pings included)
	dead   chan struct{} // closed when the reader exits
	onDead func(*wsConn) // called once from the reader when it exits
}

func dial(ctx context.Context, cfg Config, id string, log *slog.Logger, onDead func(*wsConn)) (*wsConn, error) {
	u, err := cfg.websocketURL()
	if err != nil {
		return nil, err
	}
	d := websocket.Dialer{HandshakeTimeout: cfg.HandshakeTimeout, Proxy: http.ProxyFromEnvironment}
	h := http.Header{}
	if cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	ws, resp, err := d.DialContext(ctx, u, h)
	if err != nil {
		if resp != nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			resp.Body.Close()
			return nil, &HandshakeError{StatusCode: resp.StatusCode, Body: string(body)}
		}
		return nil, fmt.Errorf("dial %s: %w", u, err)
	}
	ws.SetReadLimit(cfg.MaxMessage)
	c := &wsConn{
		id: id, ws: ws, created: time.Now(), log: log.With("conn", id),
		routes: map[string]*stream{}, owners: map[string]chan struct{}{}, cache: map[string]string{},
		names: map[string]bool{}, slots: make(chan struct{}, maxActive),
		dead: make(chan struct{}), onDead: onDead,
	}
	c.touch()
	ws.SetPingHandler(func(data string) error {
		c.touch()
		err := ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(5*time.Second))
		if errors.Is(err, websocket.ErrCloseSent) {
			return nil
		}
		return err
	})
	ws.SetPongHandler(func(string) error { c.touch(); return nil })
	go c.read()
	return c, nil
}

func (c *wsConn) touch()                  { c.last.Store(time.Now().UnixNano()) }
func (c *wsConn) lastActivity() time.Time { return time.Unix(0, c.last.Load()) }

// read is the connection's only reader: it routes each event to the stream
// that owns its lane and ends the connection on anything out of step.
func (c *wsConn) read() {
	defer close(c.dead)
	for {
		mt, data, err := c.ws.ReadMessage()
		if err != nil {
			c.fail(fmt.Errorf("%w: %v", ErrConnectionLost, err))
			break
		}
		c.touch()
		if mt != websocket.TextMessage {
			c.fail(fmt.Errorf("%w: non-text frame (stream out of step)", ErrConnectionLost))
			break
		}
		e, err := parseEvent(data)
		if err != nil {
			c.fail(fmt.Errorf("%w: %v", ErrConnectionLost, err))
			break
		}
		c.route(e)
	}
	if c.onDead != nil {
		c.onDead(c)
	}
}

func (c *wsConn) route(e *event) {
	c.mu.Lock()
	st := c.routes[e.StreamID]
	if isTerminal(e.Type) {
		if e.Type == "response.completed" && e.Response != nil {
			c.cache[e.StreamID] = e.Response.ID
			c.completed.Add(1)
		} else {
			// A failed continuation evicts its parent from the server's cache.
			delete(c.cache, e.StreamID)
		}
		if st != nil {
			delete(c.routes, e.StreamID)
		}
	}
	c.mu.Unlock()
	if st == nil {
		if e.Type == "error" && e.StreamID == "" {
			// An error that names no request concerns the whole connection.
			c.fail(fmt.Errorf("%w: %v", ErrConnectionLost, e.apiError()))
			c.ws.Close()
			return
		}
		c.log.Debug("event for no active request", "type", e.Type, "lane", e.StreamID)
		return
	}
	st.push(e)
	if isTerminal(e.Type) {
		c.release(e.StreamID)
		if c.draining.Load() && c.active() == 0 {
			c.drop(errRotated)
		}
	}
}

// fail marks the connection dead and fails every stream routed on it.
func (c *wsConn) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	routes := c.routes
	c.routes = map[string]*stream{}
	c.cache = map[string]string{}
	c.mu.Unlock()
	for lane, st := range routes {
		st.fail(err)
		c.release(lane)
	}
}

// alive reports whether the connection can take a new request.
func (c *wsConn) alive() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err == nil
}

// cached is the response id the server holds for lane on this connection.
func (c *wsConn) cached(lane string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cache[lane]
}

func (c *wsConn) active() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.routes)
}

// acquire takes ownership of lane: serial ownership from send to the
// terminal event. It is given back by the reader at the terminal event, or
// by fail.
func (c *wsConn) acquire(ctx context.Context, lane string) error {
	c.mu.Lock()
	tok, ok := c.owners[lane]
	if !ok {
		tok = make(chan struct{}, 1)
		c.owners[lane] = tok
	}
	c.names[lane] = true
	c.mu.Unlock()
	select {
	case tok <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.dead:
		return c.deadErr()
	}
	select {
	case c.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
	case <-c.dead:
	}
	<-tok
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return c.deadErr()
}

// knows reports whether lane was used on this connection.
func (c *wsConn) knows(lane string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.names[lane]
}

// reserve claims lane for this connection if it has a name left (the
// server allows 32 per connection lifetime; the default lane is free).
func (c *wsConn) reserve(lane string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if lane == "" || c.names[lane] {
		c.names[lane] = true
		return true
	}
	if len(c.names) >= maxLaneNames+1 { // +1: the default lane is not a name
		return false
	}
	c.names[lane] = true
	return true
}

// retire rotates the connection out: it takes no new requests and closes
// once its responses have ended.
func (c *wsConn) retire() {
	c.draining.Store(true)
	if c.active() == 0 {
		c.drop(errRotated)
	}
}

func (c *wsConn) release(lane string) {
	c.mu.Lock()
	tok := c.owners[lane]
	c.mu.Unlock()
	if tok != nil {
		select {
		case <-tok:
			<-c.slots
		default:
		}
	}
}

func (c *wsConn) deadErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	return ErrConnectionLost
}

// send writes one response.create on lane, which the caller owns (acquire),
// and returns the stream its events arrive on. It returns the frame size.
func (c *wsConn) send(ctx context.Context, lane string, frame []byte) (*stream, error) {
	st := newStream(c, lane)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		c.release(lane)
		return nil, c.err
	}
	c.routes[lane] = st
	c.mu.Unlock()

	c.writeMu.Lock()
	deadline := time.Now().Add(30 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.ws.SetWriteDeadline(deadline)
	err := c.ws.WriteMessage(websocket.TextMessage, frame)
	c.writeMu.Unlock()
	if err != nil {
		// A write that failed may still have reached the server: the
		// connection is no longer in step, drop it.
		err = fmt.Errorf("%w: write: %v", ErrConnectionLost, err)
		c.fail(err)
		c.ws.Close()
		return nil, err
	}
	return st, nil
}

// drop closes the socket at once, without a close handshake: used when the
// stream is out of step or a response must be aborted.
func (c *wsConn) drop(why error) {
	c.fail(why)
	c.ws.Close()
}

// close ends the connection cleanly and waits for the reader.
func (c *wsConn) close() {
	c.writeMu.Lock()
	_ = c.ws.WriteControl(websocket.CloseMessage,
		websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	c.writeMu.Unlock()
	c.drop(ErrClosed)
	<-c.dead
}

func marshalFrame(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	return b, nil
}
