package responses

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The one place that decides what a failure leads to. CauseOf names why a
// request failed; the failure table (failures) says, per cause, what the
// request does next (Action), what becomes of its stream and connection
// (StreamAction), how long it waits, whether only once, and what the user
// is told. Judge reads the row for one failure; the retry loop, the
// compaction, the warm-up (session) and the handshake (dialRule) switch on
// its Action, and the daemon's error table (daemon/turn_error.go) has a row
// per cause too.
// A failure belongs to the stream that failed: a sibling that loses its
// connection because of it sees a lost connection and is retried, never
// "aborted". failure_test.go lists every case.

// Action is what a failed request does next.
type Action uint8

const (
	// Fail: nothing here fixes it; the request fails with the error (and
	// the row's advice).
	Fail Action = iota
	// Retry: send it again after Verdict.Wait, within the cause's budget.
	Retry
	// Rewarm: the client moved the conversation to a connection of its own
	// (no stream_id lanes); send it again at once there — a warm-up warms
	// again.
	Rewarm
	// Resend: the server lost the previous response; send it again at once,
	// in full (the failure forgot the baseline).
	Resend
	// Compact: the request does not fit the window; make it smaller (compact
	// the view, split a summary request), then send it again.
	Compact
	// FallBackHTTP: the endpoint has no WebSocket; go on over HTTP.
	FallBackHTTP

	numActions = iota
)

var actionNames = [numActions]string{"fail", "retry", "re-warm", "full resend", "compact", "fall back to HTTP"}

func (a Action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return fmt.Sprintf("Action(%d)", a)
}

// StreamAction is what a failed exchange does to its stream.
type StreamAction uint8

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

// failure is one row of the failure table: what a cause leads to.
type failure struct {
	name   string       // the cause's name, for logs and tests
	action Action       // what the request does next
	stream StreamAction // what becomes of its stream
	once   bool         // the action is taken at most once per request
	wait   waitRule     // how long before it is sent again; nil: at once
	why    string       // said to the user and the log: "retrying: <why>"
	advice error        // a refusal's sentinel, what the user can do; nil: the error's own words say it
	sized  bool         // the advice quotes the session's size
}

// failures is the failure table, one row per cause (TestFailureTable
// checks every cause has one).
var failures = [NumCauses]failure{
	CauseInternal:         {name: "internal", why: "hearth failed"},
	CauseCancelled:        {name: "cancelled", stream: WalkAway, why: "the request was cancelled"},
	CauseStore:            {name: "store", why: "hearth's database failed"},
	CauseAuth:             {name: "auth", why: "the model API rejected the API key", advice: ErrAuth},
	CauseQuota:            {name: "quota", why: "the API key has no quota left", advice: ErrQuota},
	CauseContextLength:    {name: "context length", action: Compact, once: true, why: "the conversation does not fit the context window", advice: ErrContextLength, sized: true},
	CauseModelNotFound:    {name: "model not found", why: "the model does not exist", advice: ErrModelNotFound},
	CauseRefused:          {name: "refused", why: "the model API refused the request"},
	CauseResponseRefused:  {name: "response refused", why: "the response failed"},
	CauseNoLanes:          {name: "no lanes", why: "the server has no stream_id lanes"},
	CauseUpgradeRefused:   {name: "upgrade refused", why: "the WebSocket upgrade was refused"},
	CauseEventTooLarge:    {name: "event too large", why: "the model API sent an event over hearth's limit"},
	CauseNoWebSocket:      {name: "no WebSocket", action: FallBackHTTP, why: "the API answered the WebSocket upgrade with HTTP 426"},
	CauseUpgradeFailed:    {name: "upgrade failed", action: Retry, why: "the WebSocket upgrade failed"},
	CauseLanesSwitched:    {name: "lanes switched", action: Rewarm, once: true, why: "the server has no stream_id lanes"},
	CauseSilence:          {name: "silence", action: Retry, stream: WalkAway, why: "the model API went silent"},
	CauseConnectionLost:   {name: "connection lost", action: Retry, wait: soonAfterFirst, why: "the connection was lost"},
	CausePreviousNotFound: {name: "previous response not found", action: Resend, once: true, why: "the server no longer had the previous response"},
	CauseConnectionLimit:  {name: "connection limit", action: Retry, stream: DropConn, why: "the connection reached its time limit"},
	CauseRateLimit:        {name: "rate limit", action: Retry, wait: hinted, why: "rate limited"},
	CauseServerError:      {name: "server error", action: Retry, wait: serverBackoff, why: "the server failed"},
	CauseResponseFailed:   {name: "response failed", action: Retry, wait: serverBackoff, why: "the response failed on the server"},
}

// Verdict is Judge's decision for one failure: the failure table's row for
// its cause. A value, made per failure.
type Verdict struct {
	Cause  Cause
	Action Action
	Stream StreamAction
	Once   bool   // the action is taken at most once per request
	Why    string // said to the user and the log
	// Advice is a refusal's sentinel, what the user can do, to be wrapped
	// around the error; nil when the error's own words say it. ShowSize:
	// the advice quotes the session's size.
	Advice   error
	ShowSize bool

	err  error // the failure, for its wait (a rate limit's hint)
	wait waitRule
}

// Judge decides what err, the failure of a model request or a handshake,
// leads to. A transient failure is retried; a cancelled one walks away from
// its stream; a refusal is not retried (it would be refused, and billed,
// the same way again) unless something can change: the view's size, the
// link.
func Judge(err error) Verdict {
	c := CauseOf(err)
	f := failures[c]
	return Verdict{Cause: c, Action: f.action, Stream: f.stream, Once: f.once, Why: f.why,
		Advice: f.advice, ShowSize: f.sized, err: err, wait: f.wait}
}

// Wait is how long to wait before the request goes again after its
// attempt'th (0-based) failure of this cause, never longer than maxWait.
func (v Verdict) Wait(attempt int, maxWait time.Duration) time.Duration {
	if v.wait == nil {
		return 0
	}
	return v.wait(v.err, attempt, maxWait)
}

// A waitRule is how long a cause waits before its attempt'th retry.
type waitRule func(err error, attempt int, maxWait time.Duration) time.Duration

// soonAfterFirst: the first retry goes at once (a new connection is
// dialed); later ones back off.
func soonAfterFirst(_ error, attempt int, _ time.Duration) time.Duration {
	return backoff(attempt, 100*time.Millisecond, 2*time.Second) * time.Duration(min(attempt, 1))
}

// serverBackoff backs off from half a second.
func serverBackoff(_ error, attempt int, maxWait time.Duration) time.Duration {
	return backoff(attempt, 500*time.Millisecond, maxWait)
}

var tryAgain = regexp.MustCompile(`(?i)try again in ([0-9.]+)\s*(ms|s)`)

// hinted honours a "try again in 1.5s" hint, else backs off.
func hinted(err error, attempt int, maxWait time.Duration) time.Duration {
	d := backoff(attempt, time.Second, maxWait)
	var ae *APIError
	if !errors.As(err, &ae) {
		return min(d, maxWait)
	}
	if m := tryAgain.FindStringSubmatch(ae.Message); m != nil {
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

var errPreviousNotFound = errors.New("previous_response_not_found")

// dialAction is what a failed WebSocket handshake leads to.
type dialAction int

const (
	dialRetry       dialAction = iota // back off, then try again
	dialFail                          // the request fails with the error
	dialHTTPForGood                   // the endpoint has no WebSocket: HTTP from now on
	dialFallBack                      // HTTP for a while, then the WebSocket is tried again
)

// dialRule decides what the failure of handshake attempt (0-based), begun
// elapsed after the first, leads to, by Judge's verdict. ctxDone: the
// caller's context ended. An error nothing recognises (CauseInternal) is
// the network's on a dial (TLS, a proxy): tried again, then HTTP.
func dialRule(err error, ctxDone bool, attempt int, elapsed time.Duration, cfg Config) dialAction {
	if errors.Is(err, ErrClosed) || ctxDone {
		return dialFail
	}
	switch v := Judge(err); {
	case v.Action == FallBackHTTP:
		return dialHTTPForGood // switch at once, for good
	case v.Action == Fail && v.Cause != CauseInternal:
		return dialFail // HTTP would be refused the same way
	case attempt+1 >= cfg.DialAttempts || elapsed > cfg.DialBudget:
		return dialFallBack
	}
	return dialRetry
}
