package daemon

import (
	"context"
	"time"

	"github.com/hearthd/hearth/session"
)

// modelTurn runs the prompt as a model turn, with the bookkeeping around
// it: its checkpoint's key before (checkpoints.go), and after it the notes
// it told the model forgotten (notes.go), its number for the answer's
// _meta (turn_numbers.go) and, when it kept a checkpoint, the workspace's
// checkpoint budget (checkpoint_gc.go).
func (t *promptTurn) modelTurn() (session.StopReason, map[string]any, error) {
	s := t.s
	s.turnNo.prime(t.tctx, t.db, s.id)
	s.turnKey.Store(time.Now().UnixNano())
	stop, err := s.conv.Prompt(t.tctx, t.input(), updates{s})
	s.commands.settle() // what its commands' processes changed up to now (command_checkpoints.go)
	after := context.WithoutCancel(t.tctx)
	s.undone.settle(s.conv)
	var meta map[string]any
	if n, ok := s.turnNo.advance(after, t.db, s.id); ok {
		meta = map[string]any{metaTurn: n}
	}
	if s.checkpointed.Swap(false) {
		if err := t.c.d.ckpt.trim(after, s.id, t.cfg.checkpointBudget()); err != nil {
			t.log.Warn("keeping the checkpoints within their budget", "session", s.id, "err", err)
		}
	}
	return stop, meta, err
}
