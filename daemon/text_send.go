package daemon

import (
	"unicode/utf8"

	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/rpc"
)

// How a text chunk goes to an editor: at once, by whoever queues it, when
// the socket takes it without waiting (sendNow), else by the writer, in
// pieces (send).

// send writes n to the editor: a text chunk as pieces of at most
// textPiece bytes, each cut before a character starts.
func (o *outbox) send(n notification) error {
	if n.chunkSession == "" {
		return o.conn.Notify(o.ctx, n.method, n.params)
	}
	kind := "agent_message_chunk"
	if n.thought {
		kind = "agent_thought_chunk"
	}
	for rest := n.chunk; len(rest) > 0; {
		piece := rest[:pieceEnd(rest, textPiece)]
		rest = rest[len(piece):]
		if err := o.conn.Notify(o.ctx, rpc.MethodSessionUpdate, textNotification(n.chunkSession, kind, string(piece))); err != nil {
			return err
		}
	}
	return nil
}

// pieceEnd is where the first piece of text ends: at most max bytes, and
// not inside a UTF-8 sequence (text that is not UTF-8 is cut at max).
func pieceEnd(text []byte, max int) int {
	if len(text) <= max {
		return len(text)
	}
	for i := max; i > max-utf8.UTFMax && i > 0; i-- {
		if utf8.RuneStart(text[i]) {
			return i
		}
	}
	return max
}

// sendNow writes text chunk n at once, on the caller's goroutine, when
// nothing waits before it and the editor's socket takes it without
// waiting: a model's text relayed from the connection's reader then needs
// no wake-up of the writer. What the socket does not take goes the
// ordinary way: all of n, first in the outbox, or the rest of its frame,
// which the writer finishes before anything else. Called with o.mu held
// and the outbox empty; it unlocks.
func (o *outbox) sendNow(n notification) {
	o.writing = true
	o.mu.Unlock()
	kind := "agent_message_chunk"
	if n.thought {
		kind = "agent_thought_chunk"
	}
	msg := jsonrpc2.NewNotification(rpc.MethodSessionUpdate, jsonrpc2.RawMessage(textNotification(n.chunkSession, kind, string(n.chunk))))
	written, pending, err := rpc.TryWrite(o.stream, msg)
	o.mu.Lock()
	o.writing = false
	switch {
	case err != nil:
		o.mu.Unlock()
		o.shutdown()
		return
	case written:
		o.finish = pending
	default:
		// Not written: it goes first (others may have queued meanwhile).
		n.cost = o.messageCost(n.size())
		o.queued += n.cost
		o.peak = max(o.peak, o.queued)
		o.items = append(o.items, notification{})
		copy(o.items[1:], o.items)
		o.items[0] = n
	}
	wake := o.finish || len(o.items) > 0
	o.mu.Unlock()
	if wake {
		o.wakeWriter()
	}
}
