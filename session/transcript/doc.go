// Package transcript owns what a conversation's model has seen and what is
// committed: the items of the model's view, what is staged for the next
// commit (tool outputs, read-set updates, a response's end), the replay
// forms of the committed items, the compaction view and the counts a
// response's usage gives of it. Every write of a conversation's transcript
// to the store goes through a Transcript; its fields are unexported, so no
// other package can change it behind its invariants.
//
// A Transcript lives as long as its conversation (session.Conversation,
// from Open to Close); Fork makes a new one for a new session that shares
// its prefix. It holds no goroutine and nothing to close. Its state is in
// parts, each a type with its own invariants: the ledger (what is committed
// and staged, and who waits for it), the layout (where the view stands in
// the store: the compaction view), the replay cache, the meter (what the
// last response's usage counted) and, handed out by the Transcript for its
// lifetime, its Steering queue and its Turns (the rows of its turns and
// requests). Readers take a View: an immutable snapshot of the model's
// view.
//
// Imports: store only. It knows nothing of connections, lanes or the
// model's API (session and session/responses do): what the server holds of
// a transcript is the session's baseline, which the epoch of the
// transcript's View tells it to forget.
package transcript
