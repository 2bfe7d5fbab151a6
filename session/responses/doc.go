// Package responses is hearth's client of the OpenAI Responses API: one
// Client per workspace holds its WebSocket connections (one shared with
// stream_id lanes, or one per conversation without), reads each with one
// goroutine that routes events to the Stream of the request that owns
// their lane, falls back to HTTP with SSE when the WebSocket is refused,
// encodes response.create frames, parses the server's events, and decides
// what a failure is and leads to (cause.go: CauseOf; failure.go: the
// failure table, Judge, the dial rules).
//
// It knows requests and responses, not transcripts: what a request carries,
// when it may be incremental and what is stored is the agent loop's
// (package session). It imports no other hearth package.
package responses
