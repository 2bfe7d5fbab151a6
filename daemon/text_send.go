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
func (c *clientConn) send(n notification) error {
	if n.chunkSession == "" {
		return c.conn.Notify(c.d.ctx, n.method, n.params)
	}
	kind := "agent_message_chunk"
	if n.thought {
		kind = "agent_thought_chunk"
	}
	for rest := n.chunk; len(rest) > 0; {
		piece := rest[:pieceEnd(rest, textPiece)]
		rest = rest[len(piece):]
		if err := c.conn.Notify(c.d.ctx, rpc.MethodSessionUpdate, textNotification(n.chunkSession, kind, string(piece))); err != nil {
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
// which the writer finishes before anything else. Called with c.mu held
// and the outbox empty; it unlocks.
func (c *clientConn) sendNow(n notification) {
	c.writing = true
	c.mu.Unlock()
	kind := "agent_message_chunk"
	if n.thought {
		kind = "agent_thought_chunk"
	}
	msg := jsonrpc2.NewNotification(rpc.MethodSessionUpdate, jsonrpc2.RawMessage(textNotification(n.chunkSession, kind, string(n.chunk))))
	written, pending, err := rpc.TryWrite(c.stream, msg)
	c.mu.Lock()
	c.writing = false
	switch {
	case err != nil:
		c.mu.Unlock()
		c.shutdown()
		return
	case written:
		c.finish = pending
	default:
		// Not written: it goes first (others may have queued meanwhile).
		n.cost = c.messageCost(n.size())
		c.queued += n.cost
		c.peak = max(c.peak, c.queued)
		c.outbox = append(c.outbox, notification{})
		copy(c.outbox[1:], c.outbox)
		c.outbox[0] = n
	}
	wake := c.finish || len(c.outbox) > 0
	c.mu.Unlock()
	if wake {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}
