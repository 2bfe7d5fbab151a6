package sim

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"
)

// httpExchange is one POST to …/responses or …/responses/compact whose body parsed: the
// request, its record and when it arrived. Server.readHTTPRequest creates it; it lives until
// the handler returns.
type httpExchange struct {
	s   *Server
	w   http.ResponseWriter
	r   *http.Request
	req *request
	i   int       // index of its Received record
	at  time.Time // when the handler began, before reading the body: the response's schedule begins here
}

// readHTTPRequest reads, parses and records the body of a POST to endpoint (Received.Endpoint),
// or reports false once it has answered (a bad key, a body it could not read or over the
// limit, one that is not a JSON object).
func (s *Server) readHTTPRequest(w http.ResponseWriter, r *http.Request, endpoint string) (*httpExchange, bool) {
	if !s.opts.authorized(r) {
		invalidAPIKey().writeHTTP(w)
		return nil, false
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
		s.records.finish(s.records.add(rec), e.outcome(), "")
		e.writeHTTP(w)
		return nil, false
	}
	if req, err = parseRequest(body); err != nil {
		e := invalidRequest("invalid_json", "", "The body is not a JSON object.")
		s.records.finish(s.records.add(rec), e.outcome(), "")
		e.writeHTTP(w)
		return nil, false
	}
	return &httpExchange{s: s, w: w, r: r, req: req, i: s.records.add(req.fill(rec)), at: at}, true
}

// fail answers with e and completes the record.
func (x *httpExchange) fail(e apiError) {
	x.s.records.finish(x.i, e.outcome(), "")
	e.writeHTTP(x.w)
}

// parent is the stored response previous_response_id names, none without one. false means it
// is not stored and the request has been answered.
func (x *httpExchange) parent() (cachedResponse, bool) {
	if x.req.prevID == "" {
		return cachedResponse{}, true
	}
	parent, ok := x.s.stored.lookup(x.req.prevID)
	if !ok {
		x.fail(previousNotFound(x.req.prevID))
	}
	return parent, ok
}

// fitsWindow records the effective input's tokens and reports whether they fit the model's
// window; false means the request has been answered with context_length_exceeded.
func (x *httpExchange) fitsWindow(effBytes int) bool {
	n, e := x.s.opts.checkContext(x.req, effBytes)
	x.s.records.update(x.i, func(r *Received) { r.InputTokens = n })
	if e != nil {
		x.fail(*e)
	}
	return e == nil
}

// process records the input's processing delay and waits it out, plus extra, from the
// request's arrival, returning the pacer that goes on from there. When the client leaves or
// the Server closes first, it completes the record and aborts the handler: no clean end.
func (x *httpExchange) process(ctx context.Context, extra time.Duration) *pacer {
	cost := x.s.opts.Cost
	delay := cost.ProcessDelay(x.req.inputBytes)
	x.s.records.update(x.i, func(r *Received) { r.ProcessDelay = delay })
	pace := newPacer(cost, x.at)
	if err := pace.wait(ctx, delay+extra); err != nil {
		x.s.records.finish(x.i, OutcomeClosed, "")
		panic(http.ErrAbortHandler)
	}
	return pace
}
