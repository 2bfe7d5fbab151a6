package responses

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// APIError is an error event (or HTTP error body) from the Responses API.
type APIError struct {
	Status  int
	Type    string
	Code    string
	Message string
	Param   string
	// ResetAt is when a rate-limited request may go again, as an HTTP
	// 429's headers said; zero when they did not (ResetOf).
	ResetAt time.Time
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "(no message)"
	}
	if e.Code != "" {
		return fmt.Sprintf("responses API error %s: %s", e.Code, msg)
	}
	return fmt.Sprintf("responses API error: %s", msg)
}

// Is lets errors.Is find a cache miss and the refusals below by their
// sentinels.
func (e *APIError) Is(target error) bool {
	switch target {
	case errPreviousNotFound:
		return e.Code == "previous_response_not_found"
	case ErrAuth:
		return e.Status == 401 || e.Code == "invalid_api_key"
	case ErrQuota:
		return e.Code == "insufficient_quota" || e.Type == "insufficient_quota"
	case ErrContextLength:
		return e.Code == "context_length_exceeded"
	case ErrModelNotFound:
		return e.Code == "model_not_found"
	}
	return false
}

// The model API's refusals that no retry can fix (CauseOf gives each its
// cause); their messages say what to do, and the failure table gives them
// as its rows' advice.
var (
	ErrAuth          = errors.New("the model API rejected the API key: set a valid OPENAI_API_KEY (hearth doctor checks it), then restart the daemon or send it SIGHUP")
	ErrQuota         = errors.New("the API key has no quota left: check the plan and billing of its account")
	ErrContextLength = errors.New("the conversation no longer fits the model's context window: start a new session")
	ErrModelNotFound = errors.New("the model does not exist or this key cannot use it: check HEARTH_MODEL")
)

// EventTooLargeError is a server event that would keep more than
// Config.MaxMessage bytes (a response's output, one delta): its response
// fails, the connection goes on. A retry would meet the same answer.
type EventTooLargeError struct {
	Type        string // the event's type, when known
	Size, Limit int64  // the frame's bytes, and the limit
}

func (e *EventTooLargeError) Error() string {
	what := "an event"
	if e.Type != "" {
		what = e.Type
	}
	return fmt.Sprintf("the model API sent %s of %d bytes, over hearth's limit of %d: the response was dropped", what, e.Size, e.Limit)
}

// ErrConnectionLost means the socket closed, failed or fell out of step
// before the response reached a terminal event. The response failed; the
// connection is gone.
var ErrConnectionLost = errors.New("connection to the model API lost")

// unreachableError is a request's or a handshake's error when the model API
// could not be reached at all (refused, unknown host, no route, no answer
// to the connect): nothing was connected, so nothing was lost. It is
// ErrConnectionLost to the failure table, retried the same way; the cause
// is kept as text, as for a loss. Created per failure.
type unreachableError struct{ base, cause string }

func (e *unreachableError) Error() string {
	return fmt.Sprintf("could not reach the model API at %s: %s; check OPENAI_BASE_URL and your network", e.base, e.cause)
}

func (e *unreachableError) Is(target error) bool { return target == ErrConnectionLost }

// unreachable returns err as an *unreachableError when it says no
// connection to base was made (a dial's error, DNS's), else nil.
func unreachable(base string, err error) error {
	var op *net.OpError
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns):
		return &unreachableError{base: safeURL(base), cause: dns.Error()}
	case errors.As(err, &op) && op.Op == "dial":
		return &unreachableError{base: safeURL(base), cause: op.Error()}
	}
	return nil
}

// ErrClosed is returned by a Client used after Close (the agent loop's
// conversations return it too: their workspace or session is closing).
var ErrClosed = errors.New("session closed")

// ResponseError is a response that ended in response.failed or
// response.incomplete.
type ResponseError struct {
	ResponseID string
	Status     string // failed | incomplete
	Code       string // the response's error code, when failed
	Reason     string
}

func (e *ResponseError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("response %s %s", e.ResponseID, e.Status)
	}
	return fmt.Sprintf("response %s %s: %s", e.ResponseID, e.Status, e.Reason)
}

// HandshakeError is a refused WebSocket upgrade.
type HandshakeError struct {
	StatusCode int
	Body       string
}

// Is makes a 401 on the upgrade an ErrAuth.
func (e *HandshakeError) Is(target error) bool {
	return target == ErrAuth && e.StatusCode == 401
}

func (e *HandshakeError) Error() string {
	if e.StatusCode == 401 {
		return "API key rejected (HTTP 401): check OPENAI_API_KEY"
	}
	return fmt.Sprintf("websocket upgrade refused: HTTP %d %s", e.StatusCode, e.Body)
}

// ErrSilence is a first-event or idle timeout: the response may still be
// coming, so the stream is out of step and the connection must go.
var ErrSilence = errors.New("model API silent")

// errAborted is why a socket closed under an aborted response (cancelled,
// or silent). It wraps ErrConnectionLost: for the other responses on the
// socket it is a lost connection, and they are retried.
var errAborted = fmt.Errorf("%w: another response on it was aborted", ErrConnectionLost)

// errRotated is why a connection closed after being rotated out. A request
// that took the connection just before it closed retries on a new one.
var errRotated = fmt.Errorf("%w: the connection was rotated out", ErrConnectionLost)

// NoLanesError fails the requests of a connection whose server showed it
// has no stream_id lanes (it ignored or refused the field). Switched: the
// client moved to one connection per conversation (HEARTH_LANES=auto) and
// the request may be retried there once.
type NoLanesError struct {
	Why      string
	Switched bool
}

func (e *NoLanesError) Error() string {
	if e.Switched {
		return "the model API has no stream_id lanes: " + e.Why + "; using one WebSocket per session"
	}
	return "the model API has no stream_id lanes: " + e.Why + "; set HEARTH_LANES=auto or off"
}

// refusesLanes reports whether an API error refuses the stream_id field.
func refusesLanes(ae *APIError) bool {
	if ae == nil {
		return false
	}
	switch ae.Code {
	case "unknown_parameter", "invalid_stream_id", "unsupported_parameter":
		return ae.Param == "stream_id" || strings.Contains(ae.Message, "stream_id")
	}
	return false
}
