package responses

import (
	"context"
	"encoding/json"
	"time"
)

// Link is one transport a request can go out on: a Responses WebSocket
// (wsConn) or, after a fallback, HTTP with SSE (httpLink). Both deliver a
// response's events on a Stream. Links are made and closed by the Client;
// a caller uses one for one request at a time per lane.
type Link interface {
	Name() string // "ws-3", "http"
	Transport() string
	// Acquire takes ownership of lane until the response's terminal event.
	Acquire(ctx context.Context, lane string) error
	// Release gives lane back when no request was sent on it.
	Release(lane string)
	// Send writes one response.create (the WebSocket frame form) on lane.
	Send(ctx context.Context, lane string, frame []byte) (*Stream, error)
	// Cached is the response id the server holds for lane; "" when none
	// (always "" over HTTP with store:false).
	Cached(lane string) string
	Alive() bool
	// Abort ends one in-flight response as quickly as the transport
	// allows: with lanes and siblings busy on the socket it walks away
	// from the lane (st.Abandoned reports it), else it drops the socket.
	Abort(st *Stream, lanes bool)
	// Steer sends response.steer for the running response id of stream st
	// (user message items); ErrNoSteering where the transport cannot.
	Steer(ctx context.Context, st *Stream, id string, input []json.RawMessage) error

	// refusedLanes reports a server that refused stream_id on this link
	// to the Client; true when it switched to one connection per
	// conversation.
	refusedLanes(why string) bool
}

func (c *wsConn) Name() string       { return c.id }
func (c *wsConn) Transport() string  { return "ws" }
func (c *wsConn) age() time.Duration { return time.Since(c.created) }

func (c *wsConn) refusedLanes(why string) bool {
	return c.hooks.noLanes != nil && c.hooks.noLanes(nil, why)
}

// Abort: there is no cancel event, so the socket must close — unless other
// lanes are busy on it, in which case the caller walks away from the lane
// instead (lanes=true), so that siblings' turns survive.
func (c *wsConn) Abort(st *Stream, lanes bool) {
	if lanes && c.active() > 1 {
		st.abandon()
		return
	}
	c.drop(errAborted)
}
