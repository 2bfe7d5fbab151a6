package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// apiError is one API error, rendered in the shape each transport uses: nested with a status
// on WebSocket, flat on SSE, wrapped in {"error":...} as an HTTP error body.
type apiError struct {
	Status  int
	Type    string
	Code    string // "" is sent as null (the real API has errors without a code)
	Message string
	Param   string
	reset   time.Duration // a rate limit's: over HTTP, its headers say it
}

func (e apiError) body() map[string]any {
	return map[string]any{"type": e.Type, "code": nullable(e.Code), "message": e.Message, "param": nullable(e.Param)}
}

// outcome is what Received.Outcome records for the error: its code; for the 404 without a
// code, OutcomeItemNotFound; for another error without a code, its type.
func (e apiError) outcome() string {
	switch {
	case e.Code != "":
		return e.Code
	case e.Status == 404:
		return OutcomeItemNotFound
	}
	return e.Type
}

// wsEvent is the WebSocket error event; seq is nil for errors that precede any response event.
func (e apiError) wsEvent(seq *int, streamID string) map[string]any {
	ev := map[string]any{"type": "error", "status": e.Status, "error": e.body()}
	if seq != nil {
		ev["sequence_number"] = *seq
	}
	if streamID != "" {
		ev["stream_id"] = streamID
	}
	return ev
}

// sseEvent is the flat error event of an SSE stream.
func (e apiError) sseEvent(seq *int) map[string]any {
	ev := e.body()
	ev["type"] = "error"
	if seq != nil {
		ev["sequence_number"] = *seq
	}
	return ev
}

// writeHTTP answers a plain HTTP request with the error as its JSON body.
func (e apiError) writeHTTP(w http.ResponseWriter) {
	body, _ := json.Marshal(map[string]any{"error": e.body()})
	w.Header().Set("Content-Type", "application/json")
	if e.reset > 0 {
		refusedHeaders(w.Header(), e.reset)
	}
	status := e.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func invalidRequest(code, param, format string, args ...any) apiError {
	return apiError{Status: 400, Type: "invalid_request_error", Code: code, Param: param, Message: fmt.Sprintf(format, args...)}
}

func previousNotFound(id string) apiError {
	return invalidRequest("previous_response_not_found", "previous_response_id",
		"Previous response with id '%s' not found.", id)
}

func unsupportedParameter(param, where string) apiError {
	return invalidRequest("unsupported_parameter", param, "Unsupported parameter: '%s' is not supported %s.", param, where)
}

// unknownParameter is a lane-less server's answer to stream_id. Like every API error it has
// no stream_id member: the server does not know the field.
func unknownParameter(param string) apiError {
	return invalidRequest("unknown_parameter", param, "Unknown parameter: '%s'.", param)
}

// itemNotPersisted refuses an input item carrying an id under store:false: the server looks
// the id up, finds nothing and refuses the whole request (404, code null, as the real API).
func itemNotPersisted(id string) apiError {
	return apiError{Status: 404, Type: "invalid_request_error", Param: "input", Message: fmt.Sprintf(
		"Item with id '%s' not found. Items are not persisted when `store` is set to false. "+
			"Try again with `store` set to true, or remove this item from your input.", id)}
}

// invalidEncryptedContent refuses a reasoning item whose encrypted_content this server did
// not seal. The real API sends param null and names the item (or the content) in the message.
func invalidEncryptedContent(item string) apiError {
	return apiError{Status: 400, Type: "invalid_request_error", Code: "invalid_encrypted_content", Message: fmt.Sprintf(
		"The encrypted content for item %s could not be verified. Reason: Encrypted content could not be decrypted or parsed.", item)}
}

func modelNotFound(model string) apiError {
	return apiError{Status: 404, Type: "invalid_request_error", Code: "model_not_found",
		Message: fmt.Sprintf("The model '%s' does not exist or you do not have access to it.", model)}
}

func insufficientQuota() apiError {
	return apiError{Status: 429, Type: "insufficient_quota", Code: "insufficient_quota",
		Message: "You exceeded your current quota, please check your plan and billing details. " +
			"For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors."}
}

func contextLengthExceeded() apiError {
	return invalidRequest("context_length_exceeded", "input",
		"Your input exceeds the context window of this model. Please adjust your input and try again.")
}

func serverError() apiError {
	return apiError{Status: 500, Type: "server_error", Code: "server_error",
		Message: "The server had an error while processing your request. Sorry about that!"}
}

func invalidStreamID(format string, args ...any) apiError {
	return invalidRequest("invalid_stream_id", "stream_id", format, args...)
}

func streamLimitReached() apiError {
	return invalidRequest("websocket_stream_limit_reached", "stream_id",
		"This connection already used %d distinct stream_id values; open a new connection.", MaxStreamNames)
}

func connectionLimitReached() apiError {
	return invalidRequest("websocket_connection_limit_reached", "",
		"Responses websocket connection limit reached. Create a new websocket connection to continue.")
}

func rateLimited(model string, reset time.Duration) apiError {
	if reset <= 0 {
		reset = 1500 * time.Millisecond
	}
	return apiError{Status: 429, Type: "tokens", Code: "rate_limit_exceeded", reset: reset, Message: fmt.Sprintf(
		"Rate limit reached for %s on tokens per min (TPM): Limit 30000, Used 29500, Requested 1200. "+
			"Please try again in %s.", model, resetSeconds(reset))}
}
func invalidAPIKey() apiError {
	return apiError{Status: 401, Type: "invalid_request_error", Code: "invalid_api_key",
		Message: "Incorrect API key provided."}
}

func refusedUpgrade(status int) apiError {
	e := apiError{Status: status, Type: "server_error", Code: "upgrade_refused",
		Message: fmt.Sprintf("Simulated handshake refusal (%d %s).", status, http.StatusText(status))}
	switch status {
	case http.StatusUpgradeRequired:
		e.Type, e.Code, e.Message = "invalid_request_error", "websocket_not_supported", "WebSocket is not supported on this endpoint; use HTTP."
	case http.StatusUnauthorized:
		e = invalidAPIKey()
	case http.StatusTooManyRequests:
		e.Type, e.Code = "requests", "rate_limit_exceeded"
	}
	return e
}
