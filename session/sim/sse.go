package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// readHTTPRequest reads, parses and records the body of a POST to
// endpoint (Received.Endpoint): the request, its record's index and when
// it arrived, or false once it has answered (a bad key, a body it could
// not read or over the limit, one that is not a JSON object).
func (s *Server) readHTTPRequest(w http.ResponseWriter, r *http.Request, endpoint string) (*request, int, time.Time, bool) {
	if !s.authorized(r) {
		invalidAPIKey().writeHTTP(w)
		return nil, 0, time.Time{}, false
	}
	at := time.Now()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.readLimit()))
	rec := Received{Transport: "http", Endpoint: endpoint, At: at, Raw: body, Bytes: len(body)}
	var req *request
	if err != nil {
		e := invalidRequest("invalid_body", "", "Could not read the request body: %v", err)
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			e = invalidRequest("request_too_large", "", "The body is over %d bytes.", s.opts.readLimit())
			e.Status = http.StatusRequestEntityTooLarge
		}
		s.finish(s.record(rec), e.outcome(), "")
		e.writeHTTP(w)
		return nil, 0, at, false
	}
	if req, err = parseRequest(body); err != nil {
		e := invalidRequest("invalid_json", "", "The body is not a JSON object.")
		s.finish(s.record(rec), e.outcome(), "")
		e.writeHTTP(w)
		return nil, 0, at, false
	}
	return req, s.record(req.fill(rec)), at, true
}

// serveHTTPCreate is the HTTP twin: POST …/responses. With stream:true the response streams
// as SSE (event: <type> / data: <json>, no [DONE]); otherwise the final response object is
// returned as JSON. A response created with store:true (or store absent) is kept in the
// Server's store, and a later request's previous_response_id continues from it on any
// connection; under store:false nothing is kept, so continuing from it fails.
func (s *Server) serveHTTPCreate(w http.ResponseWriter, r *http.Request) {
	req, i, at, ok := s.readHTTPRequest(w, r, "")
	if !ok {
		return
	}
	fail := func(e apiError) {
		s.finish(i, e.outcome(), "")
		e.writeHTTP(w)
	}
	switch {
	case req.invalid != nil:
		fail(*req.invalid)
		return
	case req.has("generate"):
		fail(unsupportedParameter("generate", "over HTTP (WebSocket only)"))
		return
	case req.has("stream_id"):
		fail(unsupportedParameter("stream_id", "over HTTP (WebSocket only)"))
		return
	}
	if s.validate(req); req.invalid != nil {
		fail(*req.invalid)
		return
	}
	var parent cachedResponse
	if req.prevID != "" {
		var ok bool
		if parent, ok = s.stored.lookup(req.prevID); !ok {
			fail(previousNotFound(req.prevID))
			return
		}
	}
	effective := make([]json.RawMessage, 0, len(parent.items)+len(req.input))
	effective = append(append(effective, parent.items...), req.input...)
	if e := checkOutputs(effective, len(parent.items)); e != nil {
		fail(*e)
		return
	}
	fault := s.takeFault(i)
	if e, ok := fault.instead(modelOr(req.model, s.opts.model())); ok {
		fail(e)
		return
	}
	// The cached part's size is kept with it: a long conversation is not rescanned per request.
	effBytes := parent.bytes + itemsBytes(req.input)
	if e := s.checkContext(i, req, effBytes); e != nil {
		fail(*e)
		return
	}

	ctx, stop := s.requestContext(r)
	defer stop()
	delay := s.opts.Cost.ProcessDelay(req.inputBytes)
	s.update(i, func(r *Received) { r.ProcessDelay = delay })
	pace := newPacer(s.opts.Cost, at)
	if err := pace.wait(ctx, delay); err != nil {
		s.finish(i, OutcomeClosed, "")
		panic(http.ErrAbortHandler) // the server is closing (or the client left): no clean end
	}
	var ew eventWriter
	var collected *collectWriter
	if req.stream {
		ew = newSSEWriter(w)
	} else {
		collected = &collectWriter{}
		ew = collected
	}
	rep := newReply(req, "", effective, effBytes, parent.bytes, pace, fault, ew, s.opts)
	if !req.storeOff() {
		rep.persist = s.stored.put
	}
	s.update(i, func(r *Received) { r.ResponseID = rep.id })
	res, err := rep.run(ctx)
	s.update(i, func(r *Received) { r.OutputDelay = res.outputDelay })
	switch {
	case errors.Is(err, errFaultClosed):
		s.finish(i, OutcomeFaultClosed, rep.id)
		panic(http.ErrAbortHandler) // net/http drops the connection without ending the stream
	case errors.Is(err, errStreamError):
		s.finish(i, "rate_limit_exceeded", rep.id)
	case err != nil:
		s.finish(i, OutcomeClosed, rep.id)
		panic(http.ErrAbortHandler)
	case res.status == "failed":
		s.finish(i, OutcomeFailed, rep.id)
	case res.status == "incomplete":
		s.finish(i, OutcomeIncomplete, rep.id)
	default:
		s.finish(i, rep.id, rep.id)
	}
	if collected != nil {
		collected.write(w)
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
