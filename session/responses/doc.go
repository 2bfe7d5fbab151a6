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
// (package session).
//
// Connections: each has one reader goroutine and one keepalive goroutine (a
// ping every 30 s, 20 s to answer), both ended and awaited by its close; a
// frame is parsed as it streams, and one over MaxMessage (64 MiB) fails its
// own response only. A connection carries at most 16 responses at once and
// 32 lane names, a lane stays on its connection, and a connection is
// retired between requests past MaxConnAge (55 min). Deltas are handed on
// in batches within a read window (12 ms, shrinking as streams share it).
// A socket is never closed under a lock, and the lost hook is called
// outside them.
//
// Dialling: one handshake at a time per Client, DialAttempts (5) with
// jittered backoff within DialBudget; a 426 means HTTP for good, 401, 403
// and 404 fail at once, anything else falls back to HTTP for FallbackRetry
// (30 s, doubling up to 5 min) before the WebSocket is tried again. Lanes
// are detected: a server that refuses stream_id gets one connection per
// conversation from then on (NoLanesError, one retry).
//
// Compression: permessage-deflate with context takeover (wsdeflate, below
// gorilla), so the tools every create repeats cost a few
// bytes after the first; the client makes the TCP connection, the CONNECT
// through an HTTP(S) proxy and the TLS itself for it (transport.go), and
// honours a server that refuses takeover or the extension. It imports
// session/wsdeflate, a leaf.
//
// Steering (steer.go): Link.Steer sends response.steer for a running
// response; the reader counts its answers on the stream that steered
// (Stream.Steering, also after that stream's end), and a response that ends
// steered, or completes with steering queued and no tool output to wait
// for, keeps its stream and lane for the automatic successor
// (Event.Continued).
package responses
