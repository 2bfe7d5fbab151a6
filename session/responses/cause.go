package responses

import (
	"context"
	"errors"
	"fmt"
)

// Cause is why a model request (or a handshake) failed: the key of the
// failure table (failures, in failure.go), of the retry loop's budget and
// of the daemon's error table. A value, valid for the process.
type Cause uint8

// The causes, one per row of the failure table. A new one takes a row
// there, a case in CauseOf and a row in the daemon's table; the coverage
// tests fail until it has all three.
const (
	// CauseInternal: hearth's own failure, or one nothing here recognises.
	CauseInternal Cause = iota
	// CauseCancelled: the caller's context ended (the user cancelled, or a
	// deadline passed).
	CauseCancelled
	// CauseStore: hearth's store could not commit or read. The transport
	// never fails this way; the agent loop marks its store failures
	// (WithCause).
	CauseStore
	// CauseAuth: the model API refused the API key.
	CauseAuth
	// CauseQuota: the API key has no quota left.
	CauseQuota
	// CauseContextLength: the request does not fit the model's context
	// window.
	CauseContextLength
	// CauseModelNotFound: the model does not exist, or the key cannot use it.
	CauseModelNotFound
	// CauseRefused: the model API refused the request for a reason a retry
	// would meet again (a bad request, an unknown item).
	CauseRefused
	// CauseResponseRefused: a response that failed for a reason of its own
	// (not the server's health), which a retry would meet again.
	CauseResponseRefused
	// CauseNoLanes: the server has no stream_id lanes and HEARTH_LANES=on
	// requires them.
	CauseNoLanes
	// CauseUpgradeRefused: the WebSocket upgrade was refused (403, 404):
	// HTTP would be refused the same way.
	CauseUpgradeRefused
	// CauseEventTooLarge: an event over Config.MaxMessage; the answer
	// would be as large again.
	CauseEventTooLarge
	// CauseNoWebSocket: the endpoint answered the upgrade with 426.
	CauseNoWebSocket
	// CauseUpgradeFailed: any other refused upgrade (a 5xx, a 429): the
	// handshake is tried again, then HTTP.
	CauseUpgradeFailed
	// CauseLanesSwitched: the server showed it has no stream_id lanes and
	// the client moved to one connection per conversation.
	CauseLanesSwitched
	// CauseSilence: no event within the first-event or idle timeout.
	CauseSilence
	// CauseConnectionLost: the connection closed or failed before the
	// response ended, or the API could not be reached at all.
	CauseConnectionLost
	// CausePreviousNotFound: the server no longer holds the response the
	// request chained on.
	CausePreviousNotFound
	// CauseConnectionLimit: the connection reached the server's time limit.
	CauseConnectionLimit
	// CauseRateLimit: the API asked to slow down (a 429 that is not a quota).
	CauseRateLimit
	// CauseServerError: the API failed the request (a 5xx, server_error).
	CauseServerError
	// CauseResponseFailed: a response failed on the server (server_error,
	// rate_limit_exceeded in response.failed).
	CauseResponseFailed

	// NumCauses is the number of causes: tables indexed by Cause have this
	// many rows, and their tests check it.
	NumCauses = iota
)

func (c Cause) String() string {
	if int(c) < len(failures) && failures[c].name != "" {
		return failures[c].name
	}
	return fmt.Sprintf("Cause(%d)", c)
}

// causeError is an error of a cause its caller knows (WithCause).
type causeError struct {
	cause Cause
	err   error
}

func (e *causeError) Error() string { return e.err.Error() }
func (e *causeError) Unwrap() error { return e.err }

// WithCause returns err, unchanged in its text and chain, of cause c.
func WithCause(c Cause, err error) error {
	if err == nil {
		return nil
	}
	return &causeError{cause: c, err: err}
}

// CauseOf returns the cause of a non-nil err. Judge is what acts on it;
// CauseOf alone serves those that only name a failure (logs, tests).
func CauseOf(err error) Cause {
	var (
		k  *causeError
		ae *APIError
		re *ResponseError
		he *HandshakeError
		nl *NoLanesError
		tl *EventTooLargeError
	)
	switch {
	case errors.As(err, &k):
		return k.cause
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return CauseCancelled
	case errors.Is(err, ErrAuth):
		return CauseAuth
	case errors.Is(err, ErrQuota):
		return CauseQuota
	case errors.Is(err, ErrContextLength):
		return CauseContextLength
	case errors.Is(err, ErrModelNotFound):
		return CauseModelNotFound
	case errors.Is(err, ErrSilence):
		return CauseSilence
	case errors.Is(err, ErrConnectionLost):
		return CauseConnectionLost
	case errors.As(err, &nl):
		if nl.Switched {
			return CauseLanesSwitched // on a connection of its own, it cannot fail this way again
		}
		return CauseNoLanes
	case errors.As(err, &ae):
		return apiCause(ae)
	case errors.As(err, &re):
		switch re.Code {
		case "server_error", "rate_limit_exceeded":
			return CauseResponseFailed
		}
		return CauseResponseRefused
	case errors.As(err, &he):
		return upgradeCause(he)
	case errors.As(err, &tl):
		return CauseEventTooLarge
	}
	return CauseInternal
}

// apiCause is the cause of an API error event (or HTTP error body) that
// is none of the refusals with a sentinel.
func apiCause(ae *APIError) Cause {
	switch {
	case ae.Code == "previous_response_not_found":
		return CausePreviousNotFound
	case ae.Code == "websocket_connection_limit_reached":
		return CauseConnectionLimit
	case ae.Code == "rate_limit_exceeded", ae.Status == 429:
		return CauseRateLimit
	case ae.Status >= 500, ae.Code == "server_error", ae.Type == "server_error":
		return CauseServerError
	}
	return CauseRefused
}

// upgradeCause is the cause of a refused WebSocket upgrade (a 401 is
// ErrAuth's).
func upgradeCause(he *HandshakeError) Cause {
	switch he.StatusCode {
	case 426:
		return CauseNoWebSocket
	case 403, 404:
		return CauseUpgradeRefused
	}
	return CauseUpgradeFailed
}
