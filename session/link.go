package session

import (
	"context"
	"time"
)

// link is one transport a request can go out on: a Responses WebSocket
// (wsConn) or, after a fallback, HTTP with SSE (httpLink). Both deliver a
// response's events on a stream.
type link interface {
	name() string // "ws-3", "http"
	transport() string
	// acquire takes ownership of lane until the response's terminal event.
	acquire(ctx context.Context, lane string) error
	release(lane string)
	// send writes one response.create (the WebSocket frame form) on lane.
	send(ctx context.Context, lane string, frame []byte) (*stream, error)
	// cached is the response id the server holds for lane; "" when none
	// (always "" over HTTP with store:false).
	cached(lane string) string
	active() int
	alive() bool
	// abort ends one in-flight response as quickly as the transport allows.
	abort(st *stream, lanes bool)
	age() time.Duration
	close()
}

func (c *wsConn) name() string       { return c.id }
func (c *wsConn) transport() string  { return "ws" }
func (c *wsConn) age() time.Duration { return time.Since(c.created) }

// abort: there is no cancel event, so the socket must close — unless other
// lanes are busy on it, in which case the caller walks away from the lane
// instead (lanes=true), so that siblings' turns survive.
func (c *wsConn) abort(st *stream, lanes bool) {
	if lanes && c.active() > 1 {
		st.abandon()
		return
	}
	c.drop(errAborted)
}
