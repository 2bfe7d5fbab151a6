// Package session is hearth's agent loop: one Conversation per ACP
// session — what the model is told (the guidance for its family, tools, the
// transcript and the user's messages), the turn (model request → tools → model request),
// the commit path that keeps the store ahead of the editor, warm-ups,
// incremental requests and compaction — and the Client its workspace's
// conversations share. It reaches the model through session/responses,
// which knows requests and responses, never a transcript.
//
// A Conversation keeps the turn loop; what it is made of points one way,
// down: its line (the lane, the baseline and the request path: line.go,
// request.go, read.go), its toolbox (tools.go, early.go) and its
// Transcript (session/transcript), the one owner of what the model has
// seen and what is committed, through which every store write of the
// session goes.
//
// The rules it follows (docs/ARCHITECTURE.md says more):
//
//   - Serial ownership: a conversation runs one turn at a time, and on its
//     lane one request owns the stream from send until its terminal event.
//   - Warm-up: when a conversation opens it sends its real guidance,
//     tools and initial context with generate:false. The first prompt
//     consumes the warm-up within what is left of one total deadline, never
//     a second full timeout; failure, timeout or cancellation never block
//     the turn.
//   - Incremental requests: a request goes out as previous_response_id plus
//     only the new input items when every non-input field is byte-identical
//     to the last full request and the new input starts with the last input
//     plus the last output, on the same connection, whose lane still
//     caches that response (plan). Anything else is a full request, with the
//     reason recorded. A fork (fork.go) starts from its parent's baseline:
//     its first request continues the parent's response from its own lane.
//   - What the editor is told is in the store: every item is committed
//     before a request that carries it is sent, and the editor hears of a
//     staged tool output only once it is stored (session/transcript).
//   - Failures: each failure of a model request is judged once
//     (responses.Judge, where its stream was); the retry loop (judged, for
//     turns and summary requests alike), the compaction and the warm-up
//     switch on the verdict's action, and retries are budgeted per cause.
//
// Imports: session imports store, session/responses and session/transcript
// (below it), never daemon, rpc or session/sim; tools are reached through
// the Tools interface the daemon implements.
package session
