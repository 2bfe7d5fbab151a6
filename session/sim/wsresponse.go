package sim

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/gorilla/websocket"
)

// runJob is the goroutine of one response on its lane. It is started by the scheduler and
// owned by the connection's WaitGroup.
func (c *wsConn) runJob(j *job) {
	defer c.wg.Done()
	outcome, id := c.respond(j)
	c.s.records.finish(j.rec, outcome, id)
	if j.fault.is(FaultCloseAfterResponse) && outcome != OutcomeClosed {
		c.close(j.fault.closeCode())
	}
	c.sched.done(j)
}

// respond resolves a request on its lane and streams its response. It returns the record's
// outcome and the response id, if one was created.
func (c *wsConn) respond(j *job) (outcome, responseID string) {
	req, lane := j.req, j.lane
	in, e := c.resolve(j)
	if e != nil {
		if req.prevID != "" {
			c.cache.evict(lane) // a failed continuation evicts its parent
		}
		if err := c.writeJSON(e.wsEvent(nil, lane)); err != nil {
			return OutcomeClosed, ""
		}
		return e.outcome(), ""
	}

	delay := c.s.opts.Cost.ProcessDelay(req.inputBytes)
	start := j.at
	if j.waited {
		start = time.Now()
	}
	pace := newPacer(c.s.opts.Cost, start)
	c.s.records.update(j.rec, func(r *Received) { r.ProcessDelay = delay })
	if err := pace.wait(c.ctx, delay); err != nil {
		return OutcomeClosed, ""
	}
	rep := newReply(req, lane, in.items, in.bytes, in.cachedBytes, pace, j.fault, wsWriter{c}, c.s.opts)
	rep.conn, rep.board, rep.records = c.n, &c.steers, c.s.records
	// The lane's latest before its terminal event goes out: a client that
	// continues it at once from another lane (a fork) finds it.
	rep.persist = func(id string, effective []json.RawMessage, effBytes int, output []json.RawMessage) {
		c.cacheResponse(lane, id, effectiveInput{items: effective, bytes: effBytes}, output)
	}
	c.s.records.update(j.rec, func(r *Received) { r.ResponseID = rep.id })
	c.committed(in.steers, rep.id)
	c.steers.start(rep.id, lane)
	res, err := rep.run(c.ctx)
	if err != nil {
		c.steers.end(rep.id) // what it held goes with the connection: its outcome is unknown
	}
	c.s.records.update(j.rec, func(r *Received) { r.OutputDelay, r.AnsweredAt = res.outputDelay, res.answeredAt })
	switch {
	case errors.Is(err, errFaultClosed):
		return OutcomeFaultClosed, rep.id
	case errors.Is(err, errStreamError):
		if req.prevID != "" {
			c.cache.evict(lane)
		}
		return "rate_limit_exceeded", rep.id
	case err != nil:
		return OutcomeClosed, rep.id
	}
	switch res.status {
	case "failed":
		if req.prevID != "" {
			c.cache.evict(lane)
		}
		return OutcomeFailed, rep.id
	case "incomplete":
		if len(res.next) > 0 {
			c.succeed(rep, res, j.fault)
		}
		return OutcomeIncomplete, rep.id
	}
	if len(res.next) > 0 {
		c.succeed(rep, res, j.fault)
	}
	return rep.id, rep.id
}

// succeed runs the automatic successors of a steered response on its lane, each continuing
// from the one before with the steering input queued for it, until one ends with nothing
// queued; the lane's latest response is then the last of them. Under FaultSuccessorFailed
// there is none: the queued input is returned.
func (c *wsConn) succeed(rep *reply, res replyResult, f *Fault) {
	if f.is(FaultSuccessorFailed) {
		// No successor: the queued input goes back, uncommitted.
		_ = rep.steerFailed(res.next, &steerError{"successor_creation_failed", "The response could not be continued with the steering input."})
		return
	}
	for len(res.next) > 0 {
		next := rep.successor(res.next, res.output)
		c.committed(res.next, next.id)
		c.steers.start(next.id, rep.streamID)
		var err error
		if res, err = next.run(c.ctx); err != nil {
			c.steers.end(next.id)
			return
		}
		if res.status == "failed" {
			c.cache.evict(rep.streamID)
			return
		}
		rep = next // cached as its terminal event went out (persist)
	}
}

// committed records on each steer's record the response whose input holds it.
func (c *wsConn) committed(subs []steerSub, responseID string) {
	for _, sub := range subs {
		c.s.records.update(sub.rec, func(r *Received) { r.CommittedTo = responseID })
	}
}

// resolve checks a request on its lane, applies its fault if that empties the cache or answers
// in the response's place, and builds its effective input from the lane's latest response. The
// error is the one the request is answered with.
func (c *wsConn) resolve(j *job) (effectiveInput, *apiError) {
	req := j.req
	switch {
	case req.invalid != nil:
		return effectiveInput{}, req.invalid
	case req.has("background"):
		e := unsupportedParameter("background", "over WebSocket")
		return effectiveInput{}, &e
	}
	if j.fault.is(FaultDropCache) {
		c.cache.clear()
	}
	if e, ok := j.fault.instead(modelOr(req.model, c.s.opts.model())); ok {
		return effectiveInput{}, &e
	}
	var parent cachedResponse
	if req.prevID != "" {
		var ok bool
		if parent, ok = c.cache.lookup(j.lane, req.prevID); !ok {
			e := previousNotFound(req.prevID)
			return effectiveInput{}, &e
		}
	}
	in := continuing(parent, req)
	if e := checkOutputs(in.items, in.cachedItems); e != nil {
		return effectiveInput{}, e
	}
	if req.prevID != "" {
		in = withSteering(in, c.steers.held(req.prevID))
	}
	n, e := c.s.opts.checkContext(req, in.bytes)
	c.s.records.update(j.rec, func(r *Received) { r.InputTokens = n })
	if e == nil && req.prevID != "" {
		c.steers.takeParked(req.prevID) // this continuation commits what the parent held
	}
	return in, e
}

// withSteering prepends the steering input parked on the continued response to the request's
// own input, in submission order, as the API does for the explicit continuation.
func withSteering(in effectiveInput, subs []steerSub) effectiveInput {
	if len(subs) == 0 {
		return in
	}
	steer := steerInputs(subs)
	items := make([]json.RawMessage, 0, len(in.items)+len(steer))
	items = append(append(append(items, in.items[:in.cachedItems]...), steer...), in.items[in.cachedItems:]...)
	in.items, in.bytes, in.steers = items, in.bytes+itemsBytes(steer), subs
	return in
}

// cacheResponse makes a response the lane's latest: a continuation starts from its effective
// input followed by its output.
func (c *wsConn) cacheResponse(lane, id string, in effectiveInput, output []json.RawMessage) {
	items := make([]json.RawMessage, 0, len(in.items)+len(output))
	items = append(append(items, in.items...), output...)
	c.cache.put(lane, cachedResponse{id: id, items: items, bytes: in.bytes + itemsBytes(output)})
}

func modelOr(model, def string) string {
	if model == "" {
		return def
	}
	return model
}

// wsWriter streams a reply as WebSocket text frames.
type wsWriter struct{ c *wsConn }

func (w wsWriter) event(_ string, ev map[string]any) error { return w.c.writeJSON(ev) }

func (w wsWriter) errorEvent(e apiError, seq *int, streamID string) error {
	return w.c.writeJSON(e.wsEvent(seq, streamID))
}

func (w wsWriter) junk(binary bool) error {
	if binary {
		return w.c.writeFrame(websocket.BinaryMessage, []byte{0x00, 0xff, 0x7b})
	}
	return w.c.writeFrame(websocket.TextMessage, []byte(`{"type":"response.output_text.delta","delta":`))
}

func (w wsWriter) abort(code int) { w.c.close(code) }
