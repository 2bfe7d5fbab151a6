package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/store"
	"github.com/hearthd/hearth/workspace"
)

func isUndoCommand(text string) bool { return strings.TrimSpace(text) == "/undo" }

// undoTurn puts back the files of session s's last turn that changed any
// (checkpoints.go kept their pre-images): a changed file gets its content
// and mode back, a created one is removed, a removed one comes back. A
// file that no longer holds what the turn left is someone else's work now:
// it is left as it is and named as a conflict. The writes go through ed,
// like the file tools'. The turn is then marked undone, so undoing again
// takes the turn before, and the model is told before its next message.
// The caller holds the session's turn (startTurn).
func undoTurn(ctx context.Context, db *store.DB, objects objectStore, s *openSession, ed workspace.Editor) (rpc.UndoResult, error) {
	res := rpc.UndoResult{SessionID: s.id}
	turn, files, found, err := db.Checkpoints().LastChanged(ctx, s.id)
	if err != nil {
		return res, err
	}
	if !found {
		res.Message = "Nothing to undo: no turn of this session left a file changed by hearth that is not undone already."
		res.Message += droppedLine(ctx, db, s.id, 0) // checkpoint_gc.go
		return res, nil
	}
	var p putBack // restore.go
	p.turn(ctx, objects, s, ed, files)
	res.Restored, res.Removed, res.Conflicts, res.Failed = p.Restored, p.Removed, p.Conflicts, p.Failed
	res.ConflictDiffs, res.NotRestorable = p.Diffs, p.NotRestorable
	if err := db.Checkpoints().MarkUndone(context.WithoutCancel(ctx), s.id, turn); err != nil {
		return res, err
	}
	res.Undone = true
	res.Message = undoMessage(res) + diffsText(res.ConflictDiffs) // conflict_diff.go
	s.undone.add(undoNote(res))
	return res, nil
}

// undoMessage says what an undo did, for the user.
func undoMessage(r rpc.UndoResult) string {
	var b strings.Builder
	b.WriteString("Undid the file changes of this session's last turn that changed files.")
	list := func(what string, paths []string) {
		if len(paths) > 0 {
			fmt.Fprintf(&b, " %s: %s.", what, strings.Join(paths, ", "))
		}
	}
	list("Restored", r.Restored)
	list("Removed (created by that turn)", r.Removed)
	list("Left as they are, changed since that turn (conflicts)", r.Conflicts)
	list("Could not be restored", r.Failed)
	list("Not restorable (their content before that turn was not kept)", r.NotRestorable)
	return b.String()
}

// undoNote tells the model what an undo changed under it.
func undoNote(r rpc.UndoResult) string {
	var b strings.Builder
	b.WriteString("The user undid (/undo) the file changes of your last turn that changed files; what you remember of these files is out of date, read them again before relying on them.")
	list := func(what string, paths []string) {
		if len(paths) > 0 {
			fmt.Fprintf(&b, "\n%s: %s", what, strings.Join(paths, ", "))
		}
	}
	list("Put back as they were before that turn", r.Restored)
	list("Removed (that turn created them)", r.Removed)
	list("Not undone, changed by someone else since (left as they are)", r.Conflicts)
	list("Not undone, could not be restored", r.Failed)
	list("Not undone, their content before that turn was not kept", r.NotRestorable)
	return b.String()
}

// undo runs /undo as the claimed turn t, and tells the editors.
func (t *promptTurn) undo() session.StopReason {
	res, err := undoTurn(t.tctx, t.db, checkpointObjects(t.cfg.DataDir), t.s, t.s.toolEditor())
	if err != nil {
		t.log.Warn("undo failed", "session", t.s.id, "err", err)
		res.Message = "The undo failed: " + err.Error()
	}
	updates{t.s}.Reply(res.Message)
	return session.StopEndTurn
}

// hearthUndo is _hearth/undo: /undo for `hearth undo`, run as a turn of
// the session (after the running one, if any); its attached editors are
// told. A dry run (undo_preview.go) reads the store only, and answers at
// once.
func hearthUndo(c *clientConn, ctx context.Context, params json.RawMessage) (any, error) {
	var p rpc.UndoParams
	if err := rpc.DecodeParams(params, &p); err != nil {
		return nil, err
	}
	row, err := sessionByIDOrPrefix(ctx, c.d.db, p.SessionID)
	if err != nil {
		return nil, err
	}
	if p.DryRun {
		return undoPreview(ctx, c.d.db, row.ID)
	}
	return asSessionTurn(c, ctx, row.ID, "undo", func(tctx context.Context, s *openSession) (rpc.UndoResult, string, error) {
		res, err := undoTurn(tctx, c.d.db, checkpointObjects(c.d.Config().DataDir), s, s.toolEditor())
		return res, res.Message, err
	})
}

// asSessionTurn runs fn as a turn of session id, after the running one if
// any, for an extension call (what names it in the cancellation's error);
// the session's attached editors are shown the message fn returns, as the
// answer to the command.
func asSessionTurn[R any](c *clientConn, ctx context.Context, id, what string, fn func(context.Context, *openSession) (R, string, error)) (R, error) {
	var zero R
	for {
		s, err := c.d.lookup(ctx, id)
		if err != nil {
			return zero, err
		}
		tctx, release, await, closed, err := c.d.startTurn(c, s)
		if closed {
			continue // the next lookup opens it again
		}
		if err != nil {
			return zero, err
		}
		if !await() {
			return zero, fmt.Errorf("the %s was cancelled before it ran", what)
		}
		res, msg, err := fn(tctx, s)
		if err == nil {
			updates{s}.Reply(msg)
		}
		release()
		return res, err
	}
}
