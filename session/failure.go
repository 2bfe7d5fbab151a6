package session

import (
	"context"
	"errors"
	"time"
)

// The one place that decides what a failed model request leads to: what
// happens to its stream and connection, and whether the request is retried.
// The failure belongs to the stream that failed: a sibling that loses its
// connection because of it sees a lost connection and is retried, never
// "aborted". failure_test.go lists every case.

// streamAction is what a failed exchange does to its stream.
type streamAction int

const (
	// leave: the stream already ended (its terminal error, or the
	// connection's failure); nothing more to do.
	leave streamAction = iota
	// walkAway: the response may still be streaming (cancelled, or silent).
	// With siblings on the socket the conversation abandons its lane and
	// moves to a new one; alone, it drops the socket (there is no cancel
	// event).
	walkAway
	// dropConn: the connection itself is done (its time limit): drop it;
	// siblings on it are retried on a new one.
	dropConn
)

// verdict is judge's decision for one failed attempt.
type verdict struct {
	stream streamAction
	retry  bool
	once   string // non-empty: retried at most once per request for this reason
	wait   time.Duration
	why    string // said to the user and the log when retried
}

var errPreviousNotFound = errors.New("previous_response_not_found")

// judge decides what err — the failure of attempt (0-based) of one model
// request — leads to.
func judge(err error, attempt int, cfg Config) verdict {
	var (
		ae *APIError
		re *ResponseError
		nl *NoLanesError
	)
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return verdict{stream: walkAway}
	case errors.Is(err, ErrSilence):
		// The stream is out of step; the retry goes on a new lane or a new
		// connection, so a late answer is never taken for the retry's.
		return verdict{stream: walkAway, retry: true, why: "the model API went silent"}
	case errors.As(err, &nl):
		// Once: the retry goes out without stream_id on a connection of its
		// own, which cannot fail this way again.
		return verdict{retry: nl.Switched, once: "lanes", why: "the server has no stream_id lanes"}
	case errors.Is(err, ErrAuth), errors.Is(err, ErrQuota), errors.Is(err, ErrContextLength), errors.Is(err, ErrModelNotFound):
		return verdict{} // a retry would be refused (and billed) the same way
	case errors.Is(err, ErrConnectionLost):
		// The first retry goes at once (a new connection is dialed); later
		// ones back off.
		wait := backoff(attempt, 100*time.Millisecond, 2*time.Second) * time.Duration(min(attempt, 1))
		return verdict{retry: true, wait: wait, why: "the connection was lost"}
	case errors.As(err, &ae):
		switch {
		case ae.Code == "previous_response_not_found":
			return verdict{retry: true, once: "cache", why: "the server no longer had the previous response"}
		case ae.Code == "websocket_connection_limit_reached":
			return verdict{stream: dropConn, retry: true, why: "the connection reached its time limit"}
		case ae.Code == "rate_limit_exceeded" || ae.Status == 429:
			return verdict{retry: true, wait: hinted(ae.Message, attempt, cfg), why: "rate limited"}
		case ae.Status >= 500 || ae.Code == "server_error" || ae.Type == "server_error":
			return verdict{retry: true, wait: backoff(attempt, 500*time.Millisecond, cfg.MaxRetryWait), why: "the server failed"}
		}
	case errors.As(err, &re):
		if re.Code == "server_error" || re.Code == "rate_limit_exceeded" {
			return verdict{retry: true, wait: backoff(attempt, 500*time.Millisecond, cfg.MaxRetryWait), why: "the response failed on the server"}
		}
	}
	return verdict{}
}
