package sim

import (
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// FaultKind names one injectable failure.
type FaultKind int

// The fault switches. Request faults apply to the next matching response.create; handshake
// faults to the next WebSocket upgrades. See Fault for the parameters each one reads.
const (
	FaultNone               FaultKind = iota
	FaultRefuseUpgrade                // handshake: answer the upgrade with Status (426, 429, 500, 401...)
	FaultCloseMidResponse             // ws+http: after AfterEvents events, close with CloseCode (1000, 1011, CloseAbrupt); HTTP aborts the stream
	FaultCloseAfterResponse           // ws: close with CloseCode right after the terminal event
	FaultBinaryFrame                  // ws: send a binary frame after AfterEvents events, then carry on
	FaultMalformedFrame               // ws+http: send a non-JSON frame / SSE data line after AfterEvents events, then carry on
	FaultRateLimit                    // ws+http: rate_limit_exceeded (429); AfterEvents 0 = instead of the response (HTTP: 429 status), >0 = error event mid-stream
	FaultResponseFailed               // ws+http: created, in_progress, then response.failed
	FaultResponseIncomplete           // ws+http: half the text, then response.incomplete (reason max_output_tokens)
	FaultDropCache                    // ws: empty the connection-local cache before the request resolves previous_response_id
	FaultConnectionLimit              // ws: answer with websocket_connection_limit_reached and close, as at MaxAge
	FaultSilence                      // ws+http: hold the event at index AfterEvents (default the first) for Delay
	FaultInsufficientQuota            // ws+http: insufficient_quota (429) instead of the response
	FaultContextLength                // ws+http: context_length_exceeded (400, param input) instead of the response
	FaultServerError                  // ws+http: server_error (500) instead of the response
	FaultInvalidAPIKey                // ws+http: invalid_api_key (401) instead of the response
	FaultSuccessorFailed              // ws: a steered response gets no successor: response.steer.failed (successor_creation_failed) returns the input
)

var faultNames = [...]string{"none", "refuse_upgrade", "close_mid_response", "close_after_response",
	"binary_frame", "malformed_frame", "rate_limit", "response_failed", "response_incomplete",
	"drop_cache", "connection_limit", "silence", "insufficient_quota", "context_length", "server_error",
	"invalid_api_key", "successor_failed"}

func (k FaultKind) String() string {
	if k >= 0 && int(k) < len(faultNames) {
		return faultNames[k]
	}
	return "fault(?)"
}

// CloseAbrupt as a Fault.CloseCode drops the TCP connection without a close frame.
const CloseAbrupt = -1

// Fault is one injected failure. It applies to the next Count matching requests (or
// handshakes, for FaultRefuseUpgrade) and is then removed, so tests are deterministic.
// Pending faults are tried in injection order; a request consumes at most one fault.
type Fault struct {
	Kind        FaultKind
	Count       int                 // how many requests/handshakes it applies to; 0 means 1
	Status      int                 // FaultRefuseUpgrade: the HTTP status (default 500)
	AfterEvents int                 // events of the response written before the fault fires; past the end it fires before the terminal event
	CloseCode   int                 // close faults: 1000 (default), 1011, ... or CloseAbrupt
	Delay       time.Duration       // FaultSilence: how long the event is held
	Match       func(Received) bool // optional filter on the request; it must not call the fault methods
}

// faultQueue holds the injected faults not yet used up, in injection order. One per Server; it
// lives as long as the Server. Its lock is never held together with another lock of the Server.
type faultQueue struct {
	mu     sync.Mutex // guards faults
	faults []*Fault
}

// InjectFault queues f behind the faults already pending.
func (s *Server) InjectFault(f Fault) { s.faults.push(f) }

// ClearFaults removes every pending fault.
func (s *Server) ClearFaults() { s.faults.clear() }

// PendingFaults is the number of faults not yet used up.
func (s *Server) PendingFaults() int { return s.faults.pending() }

func (q *faultQueue) push(f Fault) {
	if f.Count <= 0 {
		f.Count = 1
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.faults = append(q.faults, &f)
}

func (q *faultQueue) clear() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.faults = nil
}

func (q *faultQueue) pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.faults)
}

// appliesTo reports whether a request fault kind can act on the given transport.
func (k FaultKind) appliesTo(transport string) bool {
	switch k {
	case FaultNone, FaultRefuseUpgrade:
		return false
	case FaultCloseAfterResponse, FaultBinaryFrame, FaultDropCache, FaultConnectionLimit:
		return transport == "ws"
	}
	return true
}

// takeHandshake consumes one use of the first pending upgrade refusal.
func (q *faultQueue) takeHandshake() *Fault {
	return q.take(func(f *Fault) bool { return f.Kind == FaultRefuseUpgrade })
}

// takeFor consumes one use of the first pending fault that fits record i of records, and notes
// it there.
func (q *faultQueue) takeFor(records *recorder, i int) *Fault {
	rec := records.get(i)
	f := q.take(func(f *Fault) bool {
		return f.Kind.appliesTo(rec.Transport) && (f.Match == nil || f.Match(rec))
	})
	if f != nil {
		records.update(i, func(r *Received) { r.Fault = f.Kind })
	}
	return f
}

func (q *faultQueue) take(fits func(*Fault) bool) *Fault {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, f := range q.faults {
		if !fits(f) {
			continue
		}
		f.Count--
		if f.Count == 0 {
			q.faults = append(q.faults[:i:i], q.faults[i+1:]...)
		}
		c := *f
		return &c
	}
	return nil
}

func (f *Fault) is(k FaultKind) bool { return f != nil && f.Kind == k }

func (f *Fault) status() int {
	if f.Status == 0 {
		return http.StatusInternalServerError
	}
	return f.Status
}

func (f *Fault) closeCode() int {
	if f.CloseCode == 0 {
		return websocket.CloseNormalClosure
	}
	return f.CloseCode
}
