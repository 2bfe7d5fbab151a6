package responses

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The one place that decides what a failure leads to. Classify names its
// kind, for everyone who acts on one: the retry loop, compaction and the
// warm-up (session), the daemon's error codes (daemon/turn_error.go). Judge
// decides what a failed model request does to its stream and connection
// and whether it is retried; dialRule what a failed WebSocket handshake
// does.
// A failure belongs to the stream that failed: a sibling that loses its
// connection because of it sees a lost connection and is retried, never
// "aborted". failure_test.go lists every case.

// Kind is what a failure is.
type Kind uint8

const (
	// KindInternal: hearth's own failure, or one nothing here recognises.
	KindInternal Kind = iota
	// KindCancelled: the caller's context ended (the user cancelled, or a
	// deadline passed).
	KindCancelled
	// KindStore: hearth's store could not commit or read. The transport
	// never fails this way; the agent loop marks its store failures
	// (WithKind).
	KindStore
	// KindAuth: the model API refused the API key.
	KindAuth
	// KindQuota: the API key has no quota left.
	KindQuota
	// KindContextLength: the request does not fit the model's context
	// window.
	KindContextLength
	// KindModelNotFound: the model does not exist, or the key cannot use it.
	KindModelNotFound
	// KindModelAPI: the model API refused or failed the request for a
	// reason a retry would meet again (a bad request, a refused upgrade, a
	// server without stream_id lanes when they are required).
	KindModelAPI
	// KindTransient: the request failed on its way and may succeed again:
	// a lost connection, silence, a rate limit, a server error, an evicted
	// previous response, the connection's time limit.
	KindTransient

	// NumKinds is the number of kinds: tables indexed by Kind have this
	// many rows, and their tests check it.
	NumKinds = iota
)

var kindNames = [NumKinds]string{"internal", "cancelled", "store", "auth", "quota", "context length",
	"model not found", "model API", "transient"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// kindError is an error of a kind its caller knows (WithKind).
type kindError struct {
	kind Kind
	err  error
}

func (e *kindError) Error() string { return e.err.Error() }
func (e *kindError) Unwrap() error { return e.err }

// WithKind returns err, unchanged in its text and chain, classified as k.
func WithKind(k Kind, err error) error {
	if err == nil {
		return nil
	}
	return &kindError{kind: k, err: err}
}

// Classify returns the kind of a non-nil err.
func Classify(err error) Kind {
	var (
		k  *kindError
		ae *APIError
		re *ResponseError
		he *HandshakeError
		nl *NoLanesError
		tl *EventTooLargeError
	)
	switch {
	case errors.As(err, &k):
		return k.kind
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return KindCancelled
	case errors.Is(err, ErrAuth):
		return KindAuth
	case errors.Is(err, ErrQuota):
		return KindQuota
	case errors.Is(err, ErrContextLength):
		return KindContextLength
	case errors.Is(err, ErrModelNotFound):
		return KindModelNotFound
	case errors.Is(err, ErrSilence), errors.Is(err, ErrConnectionLost):
		return KindTransient
	case errors.As(err, &nl):
		if nl.Switched {
			return KindTransient // on a connection of its own, it cannot fail this way again
		}
		return KindModelAPI
	case errors.As(err, &ae):
		if transientAPI(ae) {
			return KindTransient
		}
		return KindModelAPI
	case errors.As(err, &re):
		if re.Code == "server_error" || re.Code == "rate_limit_exceeded" {
			return KindTransient
		}
		return KindModelAPI
	case errors.As(err, &he), errors.As(err, &tl):
		return KindModelAPI
	}
	return KindInternal
}

// transientAPI reports whether an API error event may not recur.
func transientAPI(ae *APIError) bool {
	switch {
	case ae.Code == "previous_response_not_found", ae.Code == "websocket_connection_limit_reached",
		ae.Code == "rate_limit_exceeded", ae.Status == 429,
		ae.Status >= 500, ae.Code == "server_error", ae.Type == "server_error":
		return true
	}
	return false
}

// StreamAction is what a failed exchange does to its stream.
type StreamAction int

const (
	// Leave: the stream already ended (its terminal error, or the
	// connection's failure); nothing more to do.
	Leave StreamAction = iota
	// WalkAway: the response may still be streaming (cancelled, or silent).
	// With siblings on the socket the conversation abandons its lane and
	// moves to a new one; alone, it drops the socket (there is no cancel
	// event): Link.Abort.
	WalkAway
	// DropConn: the connection itself is done (its time limit): drop it;
	// siblings on it are retried on a new one.
	DropConn
)

// Reasons a retry may be taken at most once per request (Verdict.Once).
const (
	OnceLanes = "lanes" // retried without stream_id, on a connection of its own
	OnceCache = "cache" // retried in full after the server evicted the previous response
)

// Verdict is Judge's decision for one failed attempt.
type Verdict struct {
	Stream StreamAction
	Retry  bool
	Once   string // non-empty: retried at most once per request for this reason
	Wait   time.Duration
	Why    string // said to the user and the log when retried
}

var errPreviousNotFound = errors.New("previous_response_not_found")

// Judge decides what err — the failure of attempt (0-based) of one model
// request — leads to; no wait is longer than maxWait. Only a transient
// failure is retried; a cancelled one walks away from its stream; any
// other would be refused (and billed) the same way again.
func Judge(err error, attempt int, maxWait time.Duration) Verdict {
	switch Classify(err) {
	case KindCancelled:
		return Verdict{Stream: WalkAway}
	case KindTransient:
		return transient(err, attempt, maxWait)
	}
	return Verdict{}
}

// transient is Judge's decision for a transient failure.
func transient(err error, attempt int, maxWait time.Duration) Verdict {
	var ae *APIError
	var nl *NoLanesError
	switch {
	case errors.Is(err, ErrSilence):
		// The stream is out of step; the retry goes on a new lane or a new
		// connection, so a late answer is never taken for the retry's.
		return Verdict{Stream: WalkAway, Retry: true, Why: "the model API went silent"}
	case errors.As(err, &nl):
		// Once: the retry goes out without stream_id on a connection of its
		// own, which cannot fail this way again.
		return Verdict{Retry: true, Once: OnceLanes, Why: "the server has no stream_id lanes"}
	case errors.Is(err, ErrConnectionLost):
		// The first retry goes at once (a new connection is dialed); later
		// ones back off.
		wait := backoff(attempt, 100*time.Millisecond, 2*time.Second) * time.Duration(min(attempt, 1))
		return Verdict{Retry: true, Wait: wait, Why: "the connection was lost"}
	case errors.As(err, &ae):
		switch {
		case ae.Code == "previous_response_not_found":
			return Verdict{Retry: true, Once: OnceCache, Why: "the server no longer had the previous response"}
		case ae.Code == "websocket_connection_limit_reached":
			return Verdict{Stream: DropConn, Retry: true, Why: "the connection reached its time limit"}
		case ae.Code == "rate_limit_exceeded" || ae.Status == 429:
			return Verdict{Retry: true, Wait: hinted(ae.Message, attempt, maxWait), Why: "rate limited"}
		}
		return Verdict{Retry: true, Wait: backoff(attempt, 500*time.Millisecond, maxWait), Why: "the server failed"}
	}
	// A response that failed on the server.
	return Verdict{Retry: true, Wait: backoff(attempt, 500*time.Millisecond, maxWait), Why: "the response failed on the server"}
}

var tryAgain = regexp.MustCompile(`(?i)try again in ([0-9.]+)\s*(ms|s)`)

// hinted honours a "try again in 1.5s" hint, else backs off.
func hinted(msg string, attempt int, maxWait time.Duration) time.Duration {
	d := backoff(attempt, time.Second, maxWait)
	if m := tryAgain.FindStringSubmatch(msg); m != nil {
		if v, err := strconv.ParseFloat(m[1], 64); err == nil {
			unit := time.Second
			if strings.EqualFold(m[2], "ms") {
				unit = time.Millisecond
			}
			d = time.Duration(v * float64(unit))
		}
	}
	return min(d, maxWait)
}

// dialAction is what a failed WebSocket handshake leads to.
type dialAction int

const (
	dialRetry       dialAction = iota // back off, then try again
	dialFail                          // the request fails with the error
	dialHTTPForGood                   // the endpoint has no WebSocket: HTTP from now on
	dialFallBack                      // HTTP for a while, then the WebSocket is tried again
)

// dialRule decides what the failure of handshake attempt (0-based), begun
// elapsed after the first, leads to. ctxDone: the caller's context ended.
func dialRule(err error, ctxDone bool, attempt int, elapsed time.Duration, cfg Config) dialAction {
	var he *HandshakeError
	switch {
	case errors.Is(err, ErrClosed) || ctxDone:
		return dialFail
	case errors.As(err, &he) && he.StatusCode == 426:
		// This endpoint does not do WebSocket: switch at once, for good.
		return dialHTTPForGood
	case errors.As(err, &he) && (he.StatusCode == 401 || he.StatusCode == 403 || he.StatusCode == 404):
		return dialFail // HTTP would be refused the same way
	case attempt+1 >= cfg.DialAttempts || elapsed > cfg.DialBudget:
		return dialFallBack
	}
	return dialRetry
}
