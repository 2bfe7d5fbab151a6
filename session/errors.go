package session

import (
	"errors"
	"fmt"
)

// APIError is an error event (or HTTP error body) from the Responses API.
type APIError struct {
	Status  int
	Type    string
	Code    string
	Message string
	Param   string
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

// Is lets errors.Is find a cache miss by its sentinel.
func (e *APIError) Is(target error) bool {
	return target == errPreviousNotFound && e.Code == "previous_response_not_found"
}

// ErrConnectionLost means the socket closed, failed or fell out of step
// before the response reached a terminal event. The response failed; the
// connection is gone.
var ErrConnectionLost = errors.New("connection to the model API lost")

// ErrClosed is returned by a Client or Conversation used after Close.
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

func (e *HandshakeError) Error() string {
	if e.StatusCode == 401 {
		return "API key rejected (HTTP 401): check OPENAI_API_KEY"
	}
	return fmt.Sprintf("websocket upgrade refused: HTTP %d %s", e.StatusCode, e.Body)
}

// errSilence is a first-event or idle timeout: the response may still be
// coming, so the stream is out of step and the connection must go.
var errSilence = errors.New("model API silent")

// errAborted is why a socket closed under a cancelled response.
var errAborted = errors.New("response aborted by the user")

// errRotated is why a connection closed after being rotated out.
var errRotated = errors.New("connection rotated")

// errNoWarmupOverHTTP: a warm-up is pointless when every request is full.
var errNoWarmupOverHTTP = errors.New("no warm-up over HTTP")

// ErrShutdown is the cause a daemon cancels turns with when it stops: such
// a turn ends as interrupted, not cancelled (the user did not ask).
var ErrShutdown = errors.New("hearth is shutting down")
