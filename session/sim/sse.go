package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// serveHTTPCreate is the HTTP twin: POST …/responses. With stream:true the response streams
// as SSE (event: <type> / data: <json>, no [DONE]); otherwise the final response object is
// returned as JSON. A response created with store:true (or store absent) is kept in the
// Server's store, and a later request's previous_response_id continues from it on any
// connection; under store:false nothing is kept, so continuing from it fails.
func (s *Server) serveHTTPCreate(w http.ResponseWriter, r *http.Request) {
	x, ok := s.readHTTPRequest(w, r, "")
	if !ok {
		return
	}
	s.limits.headers(w.Header(), s.opts) // again, this request counted
	req := x.req
	switch {
	case req.invalid != nil:
		x.fail(*req.invalid)
		return
	case req.has("generate"):
		x.fail(unsupportedParameter("generate", "over HTTP (WebSocket only)"))
		return
	case req.has("stream_id"):
		x.fail(unsupportedParameter("stream_id", "over HTTP (WebSocket only)"))
		return
	}
	if s.opts.validate(req); req.invalid != nil {
		x.fail(*req.invalid)
		return
	}
	parent, ok := x.parent()
	if !ok {
		return
	}
	in := continuing(parent, req)
	if e := checkOutputs(in.items, in.cachedItems); e != nil {
		x.fail(*e)
		return
	}
	fault := s.faults.takeFor(s.records, x.i)
	if e, ok := fault.instead(modelOr(req.model, s.opts.model())); ok {
		x.fail(e)
		return
	}
	if !x.fitsWindow(in.bytes) {
		return
	}
	x.reply(in, fault)
}

// reply waits out the input's processing, runs the response and answers with it: as it
// streams (SSE) or whole (JSON). A stream that cannot end cleanly aborts the handler.
func (x *httpExchange) reply(in effectiveInput, fault *Fault) {
	ctx, stop := x.s.requestContext(x.r)
	defer stop()
	pace := x.process(ctx, 0)
	var ew eventWriter
	var collected *collectWriter
	if x.req.stream {
		ew = newSSEWriter(x.w)
	} else {
		collected = &collectWriter{}
		ew = collected
	}
	rep := newReply(x.req, "", in.items, in.bytes, in.cachedBytes, pace, fault, ew, x.s.opts)
	if !x.req.storeOff() {
		rep.persist = x.s.stored.put
	}
	x.s.records.update(x.i, func(r *Received) { r.ResponseID = rep.id })
	res, err := rep.run(ctx)
	x.s.records.update(x.i, func(r *Received) { r.OutputDelay = res.outputDelay })
	switch {
	case errors.Is(err, errFaultClosed):
		x.s.records.finish(x.i, OutcomeFaultClosed, rep.id)
		panic(http.ErrAbortHandler) // net/http drops the connection without ending the stream
	case errors.Is(err, errStreamError):
		x.s.records.finish(x.i, "rate_limit_exceeded", rep.id)
	case err != nil:
		x.s.records.finish(x.i, OutcomeClosed, rep.id)
		panic(http.ErrAbortHandler)
	case res.status == "failed":
		x.s.records.finish(x.i, OutcomeFailed, rep.id)
	case res.status == "incomplete":
		x.s.records.finish(x.i, OutcomeIncomplete, rep.id)
	default:
		x.s.records.finish(x.i, rep.id, rep.id)
	}
	if collected != nil {
		collected.write(x.w)
	}
}

// sseWriter streams a reply as server-sent events, flushing after each one.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func newSSEWriter(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	return &sseWriter{w: w, rc: http.NewResponseController(w)}
}

func (s *sseWriter) send(typ string, data []byte) error {
	if _, err := fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", typ, data); err != nil {
		return fmt.Errorf("sim: writing SSE event: %w", err)
	}
	if err := s.rc.Flush(); err != nil {
		return fmt.Errorf("sim: flushing SSE event: %w", err)
	}
	return nil
}

func (s *sseWriter) event(typ string, ev map[string]any) error {
	data, err := marshal(ev)
	if err != nil {
		return err
	}
	return s.send(typ, data)
}

func (s *sseWriter) errorEvent(e apiError, seq *int, _ string) error {
	data, err := marshal(e.sseEvent(seq))
	if err != nil {
		return err
	}
	return s.send("error", data)
}

func (s *sseWriter) junk(bool) error {
	return s.send("response.output_text.delta", []byte(`{"type":"response.output_text.delta","delta":`))
}

// abort leaves the stream unterminated; serveHTTPCreate then aborts the handler.
func (s *sseWriter) abort(int) {}

// collectWriter keeps what a non-streaming request returns: the final response or the error.
type collectWriter struct {
	response json.RawMessage
	err      *apiError
}

func (c *collectWriter) event(typ string, ev map[string]any) error {
	switch typ {
	case "response.completed", "response.incomplete", "response.failed":
		data, err := marshal(ev["response"])
		if err != nil {
			return err
		}
		c.response = data
	}
	return nil
}

func (c *collectWriter) errorEvent(e apiError, _ *int, _ string) error {
	c.err = &e
	return nil
}

func (c *collectWriter) junk(bool) error { return nil }
func (c *collectWriter) abort(int)       {}

func (c *collectWriter) write(w http.ResponseWriter) {
	if c.err != nil {
		c.err.writeHTTP(w)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(c.response, '\n'))
}
