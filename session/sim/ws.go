package sim

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// closeGrace is how long the server waits for the peer's close frame after sending its own.
const closeGrace = time.Second

// serveWS authenticates, applies handshake faults and cost, upgrades, and serves the
// connection until it ends.
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	s.conns.handshake()
	if !s.opts.authorized(r) {
		invalidAPIKey().writeHTTP(w)
		return
	}
	if f := s.faults.takeHandshake(); f != nil {
		refusedUpgrade(f.status()).writeHTTP(w)
		return
	}
	ctx, stop := s.requestContext(r)
	err := wait(ctx, s.opts.Cost.Handshake)
	stop()
	if err != nil {
		return // the client left or the server is closing
	}
	hw, ext := s.opts.negotiateDeflate(w, r)
	limits := http.Header{}
	s.limits.headers(limits, s.opts) // the upgrade's answer tells the rate limits too
	conn, err := s.upgrader.Upgrade(hw, r, limits)
	if err != nil {
		return // the upgrader has answered the client
	}
	c := newWSConn(s, conn)
	c.extension, c.compressed = ext, ext != ""
	c.wire, _ = hw.Hijacked().Raw().(*countingConn)
	if !s.conns.add(c) { // Close began during the upgrade
		c.shutdown()
		return
	}
	defer s.conns.remove(c)
	if c.wire != nil {
		s.records.countWire(c.n, c.wire)
		defer s.records.countWire(c.n, nil)
	}
	c.serve()
}

// wsConn is one upgraded WebSocket connection: its reader loop, its lane scheduler, its
// connection-local cache. Created by serveWS after the upgrade; lives until the peer or the
// server closes it. serve returns only after every goroutine of the connection has ended.
type wsConn struct {
	s    *Server
	n    int // connection number, set by connSet.add
	conn *websocket.Conn
	born time.Time
	// extension is the permessage-deflate answer the handshake gave ("" when not negotiated);
	// wsdeflate, under gorilla, compresses the frames; wire counts the TCP connection's bytes
	// (nil when not on the Server's own listener).
	extension  string
	wire       *countingConn
	compressed bool            // permessage-deflate was negotiated: extension is not ""
	ctx        context.Context // cancelled when the connection ends
	cancel     context.CancelFunc
	cache      laneCache
	steers     steerBoard
	sched      *scheduler
	wg         sync.WaitGroup // response goroutines and the age watcher

	writeMu   sync.Mutex  // serializes data frames: gorilla allows one writer at a time
	closing   atomic.Bool // a close frame was sent: frames still arriving are ignored
	limitOnce sync.Once   // the connection-limit error is sent once
}

func newWSConn(s *Server, conn *websocket.Conn) *wsConn {
	ctx, cancel := context.WithCancel(s.ctx)
	c := &wsConn{s: s, conn: conn, born: time.Now(), ctx: ctx, cancel: cancel}
	limit := MaxActiveResponses
	if !s.opts.lanesOn() {
		limit = 1
	}
	c.sched = newScheduler(limit, func(j *job) {
		c.wg.Add(1)
		go c.runJob(j)
	})
	return c
}

// serve is the connection's reader loop; pings are answered from inside ReadMessage.
func (c *wsConn) serve() {
	c.conn.SetReadLimit(c.s.opts.readLimit())
	c.handlePings()
	if c.s.opts.PushAgeLimit {
		c.wg.Add(1)
		go c.watchAge()
	}
	if every := c.s.opts.PingInterval; every > 0 {
		c.wg.Add(1)
		go c.pingLoop(every)
	}
	for {
		// The request's arrival is when its frame begins, not when the
		// server has inflated and parsed it: the client's time between a
		// response and its next request ends there.
		mt, r, err := c.conn.NextReader()
		if err != nil {
			break
		}
		at := time.Now()
		data, err := io.ReadAll(r)
		if err != nil {
			break
		}
		if c.closing.Load() {
			continue // waiting for the peer's close frame
		}
		if !c.handleFrame(mt, data, at) {
			break
		}
	}
	c.cancel()
	c.conn.Close()
	never := c.sched.close()
	c.wg.Wait()
	for _, j := range never {
		c.s.records.finish(j.rec, OutcomeClosed, "")
	}
}

// handleFrame answers one client frame; false means the connection must be dropped.
func (c *wsConn) handleFrame(mt int, data []byte, at time.Time) bool {
	rec := Received{Conn: c.n, Transport: "ws", At: at, Raw: data, Bytes: len(data),
		Compressed: c.compressed, Extension: c.extension}
	if mt != websocket.TextMessage {
		c.s.records.finish(c.s.records.add(rec), OutcomeProtocolError, "")
		c.closeNow(websocket.CloseUnsupportedData, "binary frames are not supported")
		return false
	}
	req, err := parseRequest(data)
	if err != nil || req.typ == "" {
		c.s.records.finish(c.s.records.add(rec), OutcomeProtocolError, "")
		c.closeNow(websocket.CloseProtocolError, "expected a JSON object with a string type")
		return false
	}
	i := c.s.records.add(req.fill(rec))
	if req.typ == "response.steer" {
		c.steer(i, req.fields)
		return true
	}
	if req.typ != "response.create" {
		c.reject(i, req, invalidRequest("unknown_event_type", "type", "Unsupported client event type '%s'.", req.typ))
		return true
	}
	c.create(i, req, at)
	return true
}

// create admits a response.create to its lane, or answers it at once when it cannot run.
func (c *wsConn) create(i int, req *request, at time.Time) {
	lane := ""
	if req.hasStreamID {
		switch {
		case c.s.opts.DisableLanes:
			c.reject(i, req, invalidStreamID("stream_id is not supported on this connection."))
			return
		case c.s.opts.Lanes == LanesRefuse:
			c.reject(i, req, unknownParameter("stream_id"))
			return
		case c.s.opts.Lanes == LanesIgnore:
			// one lane: the default one
		case req.streamIDErr != nil:
			c.reject(i, req, *req.streamIDErr)
			return
		case !c.sched.admitName(req.streamID):
			c.reject(i, req, streamLimitReached())
			return
		}
		if c.s.opts.lanesOn() {
			lane = req.streamID
		}
	}
	c.s.opts.validate(req)
	var fault *Fault
	if req.invalid == nil && !req.has("background") {
		fault = c.s.faults.takeFor(c.s.records, i) // a request that fails validation consumes no fault
	}
	if fault.is(FaultConnectionLimit) || time.Since(c.born) >= c.s.opts.maxAge() {
		c.connectionLimit()
		c.s.records.finish(i, "websocket_connection_limit_reached", "")
		return
	}
	if !c.sched.submit(&job{rec: i, req: req, lane: lane, fault: fault, at: at}) {
		c.s.records.finish(i, OutcomeClosed, "")
	}
}

// reject answers a request with an error event that echoes its stream_id when the server's
// lane mode echoes it.
func (c *wsConn) reject(i int, req *request, e apiError) {
	streamID := ""
	if c.s.opts.echoesStreamID() {
		streamID = req.streamID
	}
	_ = c.writeJSON(e.wsEvent(nil, streamID))
	c.s.records.finish(i, e.outcome(), "")
}

// connectionLimit sends the connection-wide limit error and closes the connection.
func (c *wsConn) connectionLimit() {
	c.limitOnce.Do(func() {
		_ = c.writeJSON(connectionLimitReached().wsEvent(nil, ""))
		c.closeFrame(websocket.CloseNormalClosure, "connection limit reached")
	})
}

// watchAge pushes the connection-limit error at MaxAge, once no response is running.
func (c *wsConn) watchAge() {
	defer c.wg.Done()
	t := time.NewTimer(c.s.opts.maxAge())
	defer t.Stop()
	select {
	case <-c.ctx.Done():
		return
	case <-t.C:
	}
	c.sched.whenIdle(c.connectionLimit)
}

func (c *wsConn) writeJSON(v any) error {
	data, err := marshal(v)
	if err != nil {
		return err
	}
	return c.writeFrame(websocket.TextMessage, data)
}

func (c *wsConn) writeFrame(mt int, data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(c.s.opts.writeTimeout()))
	return c.conn.WriteMessage(mt, data)
}

// closeFrame starts a clean close: send the close frame, then give the peer closeGrace to
// answer before the reader gives up. Writes after this fail with websocket.ErrCloseSent.
func (c *wsConn) closeFrame(code int, reason string) {
	c.closing.Store(true)
	_ = c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(closeGrace))
	_ = c.conn.SetReadDeadline(time.Now().Add(closeGrace))
}

// closeNow sends a close frame and drops the connection without waiting (client protocol errors).
func (c *wsConn) closeNow(code int, reason string) {
	c.closing.Store(true)
	_ = c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(closeGrace))
	c.conn.Close()
}

// close ends the connection with code, or drops it without a close frame for CloseAbrupt.
func (c *wsConn) close(code int) {
	if code == CloseAbrupt {
		c.closing.Store(true)
		c.conn.Close()
		return
	}
	c.closeFrame(code, "simulated fault")
}

// shutdown is Server.Close's end of the connection: going away, no wait.
func (c *wsConn) shutdown() {
	c.closeNow(websocket.CloseGoingAway, "server shutting down")
}
