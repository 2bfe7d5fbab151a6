package sim

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"
)

// Received is the record of one client frame or HTTP request, kept by the Server for tests.
// Records are created when the frame arrives and completed when it is answered; the slices
// inside are shared with the server and must be treated as read-only.
type Received struct {
	Conn      int       // WebSocket connection number, 1-based in upgrade order; 0 for HTTP
	Transport string    // "ws" or "http"
	Endpoint  string    // EndpointCompact for POST …/responses/compact; "" for a create, on either transport
	At        time.Time // when the frame's first bytes were read (WebSocket) or the handler began, before reading the body (HTTP): the response's schedule begins here unless it waited for its lane

	Type               string            // the frame's type ("response.create"); "" for a protocol error
	Generate           *bool             // the generate field, nil when absent
	PreviousResponseID string            // previous_response_id as sent
	StreamID           string            // stream_id as sent ("" = default lane)
	Model              string            // model as sent
	Instructions       string            // instructions as sent
	Tools              json.RawMessage   // tools as sent (nil when absent)
	Input              []json.RawMessage // the new input items as sent (a string input becomes one user message item)
	Store              *bool             // store as sent, nil when absent (the API then stores: true)
	Include            []string          // include as sent
	Reasoning          json.RawMessage   // the reasoning object as sent (nil when absent)
	PromptCacheKey     string            // prompt_cache_key as sent
	Raw                json.RawMessage   // the whole frame or body
	Bytes              int               // size of Raw
	Compressed         bool              // WebSocket: the connection negotiated permessage-deflate
	Extension          string            // WebSocket: the server's permessage-deflate answer ("" when not negotiated)

	InputBytes   int           // size of the input field: what the cost model charges for
	InputTokens  int           // the effective input (cached items, new input, instructions, tools) in tokens, as usage and the window count it; 0 until resolved
	ProcessDelay time.Duration // Cost.ProcessDelay(InputBytes), set when processing starts
	OutputDelay  time.Duration // the output's pacing: FirstToken plus one token gap between consecutive deltas of an item
	Fault        FaultKind     // the injected fault this request consumed, if any

	SteerID     string // response.steer: the id the server gave the accepted submission
	CommittedTo string // response.steer: the response whose input committed it (the successor, or the explicit continuation)

	ResponseID string    // the response id, when a response was created
	Outcome    string    // the response id when completed; otherwise an error code or an Outcome* value
	Answered   bool      // a terminal event (or error) was written, or the request ended with its connection
	AnsweredAt time.Time // WebSocket: when the terminal event had been written, else when Answered became true; with the next request's At, the client's own time between them
	// WireIn and WireOut are the bytes the request's TCP connection carried in and out between
	// the previous answer on it (the connection's start, for its first: the handshake) and this
	// answer, frames as compressed, when served on the Server's own listener. A request that
	// arrives before its predecessor's answer is recorded falls into that one's count; the sum
	// over a connection's requests is exact: a client's wire bytes.
	WireIn, WireOut int64
}

// Outcomes that are not a response id or an API error code.
const (
	OutcomeFailed        = "response.failed"         // ended with response.failed
	OutcomeIncomplete    = "response.incomplete"     // ended with response.incomplete
	OutcomeClosed        = "connection_closed"       // the connection ended before a terminal event
	OutcomeFaultClosed   = "closed_by_fault"         // a fault closed the connection mid-response
	OutcomeProtocolError = "protocol_error"          // binary frame, non-JSON or untyped frame: connection dropped
	OutcomeItemNotFound  = "item_not_found"          // refused with the code-less 404 "Item with id … not found" (store:false)
	OutcomeSteerAccepted = "response.steer.accepted" // a steer the target response acknowledged (failures record their code)
)

// recorder keeps the Server's records, one per client frame or HTTP request in arrival order,
// and counts the pings its clients sent; it wakes WaitReceived and WaitPings when either
// changes. One per Server, created by New; it lives as long as the Server, and its records stay
// readable after Close.
type recorder struct {
	onReceived func(Received) // Options.OnReceived
	onAnswered func(Received) // Options.OnAnswered

	mu      sync.Mutex // guards recs and changed
	recs    []Received
	changed chan struct{} // closed and replaced whenever a record is answered or a ping arrives

	pings atomic.Int64 // client pings read on WebSocket connections

	wire map[int]*wireMark // WebSocket connection number → its byte counts at its last answer; guarded by mu

	limits *rateWindow // counts each create
}

func newRecorder(onReceived, onAnswered func(Received), limits *rateWindow) *recorder {
	return &recorder{onReceived: onReceived, onAnswered: onAnswered, changed: make(chan struct{}), limits: limits}
}

// add appends r (At defaulting to now), reports it to Options.OnReceived and returns its index.
func (l *recorder) add(r Received) int {
	if r.At.IsZero() {
		r.At = time.Now()
	}
	if l.limits != nil && r.Type != "response.steer" {
		l.limits.count(r.Bytes)
	}
	l.mu.Lock()
	l.recs = append(l.recs, r)
	i := len(l.recs) - 1
	l.mu.Unlock()
	if l.onReceived != nil {
		l.onReceived(r)
	}
	return i
}

// get returns a copy of record i.
func (l *recorder) get(i int) Received {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.recs[i]
}

// update edits record i in place.
func (l *recorder) update(i int, f func(*Received)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f(&l.recs[i])
}

// finish marks record i answered, wakes WaitReceived and reports it to
// Options.OnAnswered.
func (l *recorder) finish(i int, outcome, responseID string) {
	l.mu.Lock()
	r := &l.recs[i]
	if r.Answered {
		l.mu.Unlock()
		return
	}
	r.Answered = true
	if r.AnsweredAt.IsZero() { // else the terminal event's write set it
		r.AnsweredAt = time.Now()
	}
	r.Outcome = outcome
	l.markWireLocked(r)
	if responseID != "" {
		r.ResponseID = responseID
	}
	l.signalLocked()
	done := *r
	l.mu.Unlock()
	if l.onAnswered != nil {
		l.onAnswered(done)
	}
}

// all returns a copy of every record so far, in arrival order.
func (l *recorder) all() []Received {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Received(nil), l.recs...)
}

// wait is Server.WaitReceived.
func (l *recorder) wait(ctx context.Context, n int) ([]Received, error) {
	for {
		l.mu.Lock()
		ready := len(l.recs) >= n
		for i := 0; ready && i < n; i++ {
			ready = l.recs[i].Answered
		}
		recs := append([]Received(nil), l.recs...)
		changed := l.changed
		l.mu.Unlock()
		if ready {
			return recs, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return recs, ctx.Err()
		}
	}
}

// ping counts a client's ping and wakes WaitPings.
func (l *recorder) ping() {
	l.pings.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.signalLocked()
}

// waitPings is Server.WaitPings.
func (l *recorder) waitPings(ctx context.Context, n int) error {
	for {
		l.mu.Lock()
		changed := l.changed
		l.mu.Unlock()
		if int(l.pings.Load()) >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (l *recorder) signalLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// Received returns a copy of every record so far, in arrival order.
func (s *Server) Received() []Received { return s.records.all() }

// WaitReceived waits until at least n records exist and all of the first n are answered, then
// returns a copy of every record. If ctx ends first it returns the records so far and ctx's error.
func (s *Server) WaitReceived(ctx context.Context, n int) ([]Received, error) {
	return s.records.wait(ctx, n)
}

// PingsReceived is the number of pings clients sent on the Server's WebSocket connections.
func (s *Server) PingsReceived() int { return int(s.records.pings.Load()) }

// WaitPings waits until clients have sent at least n pings, or ctx ends.
func (s *Server) WaitPings(ctx context.Context, n int) error { return s.records.waitPings(ctx, n) }
