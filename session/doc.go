// Package session is hearth's Responses API client: one WebSocket per
// workspace (Client), shared by that workspace's conversations, each on its
// own stream_id lane, and the agent loop of one conversation (Conversation).
//
// The rules it follows come from docs/ARCHITECTURE.md and the seeds:
//
//   - Serial ownership: on a lane one request owns the stream from send until
//     its terminal event; the next waits. One reader goroutine per socket
//     routes frames to the request that owns their lane.
//   - Warm-up: when a conversation opens it sends its real instructions, tools
//     and initial context with generate:false. The first prompt consumes the
//     warm-up within what is left of one total deadline, never a second full
//     timeout; failure, timeout or cancellation never block the turn.
//   - Incremental requests: a request goes out as previous_response_id plus
//     only the new input items when every non-input field is byte-identical to
//     the last full request and the new input starts with the last input plus
//     the last output, on the same connection and lane that still caches that
//     response. Anything else is a full request, with the reason recorded.
//   - Every completed item is committed to the store before the next request
//     is sent, so the transcript in SQLite is always the truth.
//
// Imports: session imports store (below it) and never daemon, rpc or
// session/sim; tools are reached through the Tools interface the daemon
// implements.
package session
