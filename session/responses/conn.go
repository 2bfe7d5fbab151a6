package responses

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// The server's per-connection limits: 16 responses in flight at once (it
// queues the rest) and 32 lane names over the connection's life.
const (
	maxActive    = 16
	maxLaneNames = 32
)

// wsConn is one Responses WebSocket. Created by dial (from Client.Link);
// lives until the server closes it, it falls out of step, or its owner
// Client drops or closes it. close waits for the reader goroutine.
type wsConn struct {
	id      string
	ws      *websocket.Conn
	created time.Time
	log     *slog.Logger

	writeMu sync.Mutex // serializes writes: gorilla allows one concurrent writer

	mu     sync.Mutex               // guards routes, owners, cache, err, names
	routes map[string]*Stream       // lane → the stream that owns it now
	owners map[string]chan struct{} // lane → ownership token (cap 1): serial ownership per lane
	cache  map[string]string        // lane → latest completed response: the server's connection-local cache as we know it
	err    error                    // why the connection is dead; nil while alive
	names  map[string]bool          // lane names used on this connection (the server allows 32)
	// steering: lane → the stream whose response was last steered there; it
	// hears the steering events that arrive after its terminal event.
	steering map[string]*Stream

	slots     chan struct{} // active responses (the server runs 16 at once and queues the rest)
	completed atomic.Int64  // responses completed: a connection that served none is not re-warmed
	draining  atomic.Bool   // rotated out: closes when its last response ends

	gate    *readGate    // batches the reader's reads while deltas stream
	events  *eventReader // parses the frames; the reader's alone
	pending []*Stream    // fed since the gate last handed on; the reader's alone

	last      atomic.Int64  // unix nanos of the last frame (pings and pongs included): the keepalive's measure
	dead      chan struct{} // closed when the reader exits
	keepalive chan struct{} // closed when the keepalive goroutine exits
	hooks     connHooks
}

// connHooks are the Client's callbacks of one connection.
type connHooks struct {
	// dead is called once from the reader when it exits.
	dead func(*wsConn)
	// noLanes is called when the server shows it has no stream_id lanes;
	// it reports whether the client switched to one connection per
	// conversation (HEARTH_LANES=auto), so the requests may be retried.
	noLanes func(ws *wsConn, why string) bool
	// headers is told the upgrade's answer's headers (the rate limits).
	headers func(http.Header)
}

func dial(ctx context.Context, cfg Config, id string, log *slog.Logger, k *counters, hooks connHooks) (*wsConn, error) {
	u, err := cfg.websocketURL()
	if err != nil {
		return nil, err
	}
	pu, err := url.Parse(u)
	if err != nil {
		return nil, err
	}
	gate := newReadGate(cfg.ReadWindow)
	d := wsDialer(cfg, pu, http.ProxyFromEnvironment, k, gate)
	h := http.Header{}
	if cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	ws, resp, err := d.DialContext(ctx, u, h)
	if resp != nil && hooks.headers != nil {
		hooks.headers(resp.Header)
	}
	if err != nil {
		if resp != nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			resp.Body.Close()
			return nil, &HandshakeError{StatusCode: resp.StatusCode, Body: string(body)}
		}
		if ue := unreachable(cfg.BaseURL, err); ue != nil {
			return nil, ue
		}
		return nil, fmt.Errorf("dial %s: %s", safeURL(u), strings.ReplaceAll(err.Error(), u, safeURL(u)))
	}
	// No read limit on the socket, which would end it: the events' reader
	// bounds what one event keeps and fails only its response.
	c := &wsConn{
		id: id, ws: ws, created: time.Now(), log: log.With("conn", id),
		routes: map[string]*Stream{}, owners: map[string]chan struct{}{}, cache: map[string]string{},
		names: map[string]bool{}, steering: map[string]*Stream{}, slots: make(chan struct{}, maxActive),
		dead: make(chan struct{}), keepalive: make(chan struct{}), hooks: hooks, gate: gate,
		events: newEventReader(cfg.MaxMessage),
	}
	gate.flush = c.handOn
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
	go c.keepAlive(cfg.KeepaliveInterval, cfg.KeepaliveTimeout)
	return c, nil
}

// keepAlive pings the connection when it has been quiet for interval and
// drops it when nothing at all (no pong, no event) arrives within timeout
// of the ping: a socket the network silently lost (laptop sleep, a NAT
// that forgot the flow) is noticed, and its conversations re-warm on a new
// one. It ends with the reader.
func (c *wsConn) keepAlive(interval, timeout time.Duration) {
	defer close(c.keepalive)
	if interval <= 0 {
		<-c.dead
		return
	}
	t := time.NewTimer(interval)
	defer t.Stop()
	var pinged time.Time // zero: no ping awaiting an answer
	for {
		select {
		case <-c.dead:
			return
		case <-t.C:
		}
		last := c.lastActivity()
		switch {
		case !pinged.IsZero() && last.After(pinged):
			pinged = time.Time{} // answered (or other frames arrived)
		case !pinged.IsZero():
			if wait := timeout - time.Since(pinged); wait > 0 {
				t.Reset(wait)
				continue
			}
			c.log.Warn("no answer to keepalive ping; dropping the connection", "timeout", timeout)
			c.drop(fmt.Errorf("%w: no answer to a keepalive ping within %s", ErrConnectionLost, timeout))
			<-c.dead
			return
		}
		if quiet := time.Since(last); quiet < interval {
			t.Reset(interval - quiet)
			continue
		}
		pinged = time.Now()
		err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(timeout)) // safe beside the writer
		if err != nil && !errors.Is(err, websocket.ErrCloseSent) {
			c.drop(fmt.Errorf("%w: keepalive ping: %v", ErrConnectionLost, err))
			<-c.dead
			return
		}
		t.Reset(timeout)
	}
}

func (c *wsConn) touch() { c.last.Store(time.Now().UnixNano()) }

// touchReader marks the connection alive at each read of a message's
// bytes: a message that takes longer than the keepalive's timeout to
// arrive (a large one on a slow link) is traffic, not silence.
type touchReader struct {
	r io.Reader
	c *wsConn
}

func (t touchReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.c.touch()
	}
	return n, err
}
func (c *wsConn) lastActivity() time.Time { return time.Unix(0, c.last.Load()) }

// read is the connection's only reader: it routes each event to the stream
// that owns its lane and ends the connection on anything out of step. The
// streams hear of their events once per batch of reads (readGate).
func (c *wsConn) read() {
	defer close(c.dead)
	for {
		mt, r, err := c.ws.NextReader()
		if err != nil {
			c.fail(fmt.Errorf("%w: %v", ErrConnectionLost, err))
			break
		}
		c.touch()
		if mt != websocket.TextMessage {
			c.fail(fmt.Errorf("%w: non-text frame (stream out of step)", ErrConnectionLost))
			break
		}
		e, err := c.events.read(touchReader{r, c}) // the frame streams through: never held whole
		if err != nil {
			c.fail(fmt.Errorf("%w: %v", ErrConnectionLost, err))
			break
		}
		c.touch()
		c.route(e)
	}
	c.handOn()
	if c.hooks.dead != nil {
		c.hooks.dead(c)
	}
}

func (c *wsConn) route(e *Event) {
	c.mu.Lock()
	st := c.routes[e.StreamID]
	if steered := c.steering[e.StreamID]; steered != nil && (isSteerEvent(e.Type) || e.Type == "response.created" && steered == st) {
		steered.noteSteer(e)
	}
	if st == nil && isSteerEvent(e.Type) {
		c.mu.Unlock()
		return // answered a steer after its response's end: noted above
	}
	if st != nil && e.Type == "response.steer.failed" && st.successorLost() {
		// The successor the stream waits for will not come: it ends here.
		delete(c.routes, e.StreamID)
		c.mu.Unlock()
		code := ""
		if e.Error != nil {
			code = e.Error.Code
		}
		st.fail(fmt.Errorf("%w (%s)", ErrNoSuccessor, code))
		c.Release(e.StreamID)
		return
	}
	// A response that ends steered, or completes with steering queued, is
	// followed by its successor on the same stream: the lane stays its.
	successor := st != nil && isTerminal(e.Type) && continuesAfter(e, st.Steering())
	if isTerminal(e.Type) {
		if e.Type == "response.completed" && e.Response != nil {
			c.cache[e.StreamID] = e.Response.ID
			c.completed.Add(1)
		} else if successor {
			// Ended steered: the server holds it for its successor.
			c.cache[e.StreamID] = e.Response.ID
		} else {
			// A failed continuation evicts its parent from the server's cache.
			delete(c.cache, e.StreamID)
		}
		if st != nil && !successor {
			delete(c.routes, e.StreamID)
		}
	}
	tagged := len(c.routes) > 0 && c.routes[""] == nil
	c.mu.Unlock()
	if st == nil && e.StreamID == "" {
		if why := laneless(e, tagged); why != "" {
			c.noLanes(why)
			return
		}
	}
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
	if e.over > 0 {
		// Only this response fails; its lane stays taken until its terminal
		// event, whose place is kept in step.
		st.fail(&EventTooLargeError{Type: e.Type, Size: e.over, Limit: c.events.limit})
	} else {
		st.queue(e)
		if e.Type == "response.output_text.delta" && st.paced() {
			c.gate.delta()
		}
	}
	if k := len(c.pending); k == 0 || c.pending[k-1] != st {
		c.pending = append(c.pending, st)
	}
	if isTerminal(e.Type) && !successor {
		c.Release(e.StreamID)
		if c.draining.Load() && c.active() == 0 {
			c.drop(errRotated)
		}
	}
}

// handOn hands the streams fed since the last call their events (or tells
// their owners that events wait). Called by the reader before each read of
// the socket (readGate) and when it ends.
func (c *wsConn) handOn() {
	for i, st := range c.pending {
		st.handOn()
		c.pending[i] = nil
	}
	c.pending = c.pending[:0]
}

// laneless says why an event for no request shows that the server has no
// stream_id lanes: it refuses the field, or it answers a lane's request
// without tagging the events (only lane requests are in flight, so an
// untagged event cannot be for the default lane). "" when it does not.
func laneless(e *Event, tagged bool) string {
	if e.Type == "error" {
		if ae := e.apiError(); refusesLanes(ae) {
			return fmt.Sprintf("the server refuses stream_id (%s)", ae.Message)
		}
		return ""
	}
	if tagged {
		return fmt.Sprintf("the server ignores stream_id (an untagged %s arrived while only lane requests were in flight)", e.Type)
	}
	return ""
}

// noLanes fails every stream of the connection and drops it: its events can
// no longer be routed. The Client decides whether the requests are retried
// on one connection per conversation.
func (c *wsConn) noLanes(why string) {
	retry := c.hooks.noLanes != nil && c.hooks.noLanes(c, why)
	c.log.Warn("the server has no stream_id lanes", "why", why, "switched", retry)
	err := &NoLanesError{Why: why, Switched: retry}
	c.fail(err)
	c.ws.Close()
}

// fail marks the connection dead and fails every stream routed on it.
func (c *wsConn) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	routes := c.routes
	c.routes = map[string]*Stream{}
	c.cache = map[string]string{}
	c.steering = map[string]*Stream{}
	c.mu.Unlock()
	for lane, st := range routes {
		st.fail(err)
		c.Release(lane)
	}
}

// alive reports whether the connection can take a new request.
func (c *wsConn) Alive() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err == nil
}

// cached is the response id the server holds for lane on this connection.
func (c *wsConn) Cached(lane string) string {
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
func (c *wsConn) Acquire(ctx context.Context, lane string) error {
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
	if !c.Alive() { // failed while waiting: never send on a dead socket
		<-tok
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

func (c *wsConn) Release(lane string) {
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
func (c *wsConn) Send(ctx context.Context, lane string, frame []byte) (*Stream, error) {
	st := newStream(c, lane)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		c.Release(lane)
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
	<-c.keepalive
}
