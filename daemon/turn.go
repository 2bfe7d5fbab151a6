package daemon

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/store"
)

// promptTurn is one session/prompt once it has claimed its session
// (Daemon.startTurn): what it sends the model before the user's message,
// and what it tells the editors as it ends. Made by preparePrompt on the
// connection's read loop; from then on used by the goroutine that runs the
// turn only, until the prompt is answered.
type promptTurn struct {
	c       *clientConn // the editor that sent the prompt
	s       *openSession
	content promptContent
	tctx    context.Context // the turn's: cancelled by session/cancel, the session's close or the daemon's
	release func()          // ends the turn for the session (startTurn); may be called more than once
	db      *store.DB
	log     *slog.Logger
	cfg     Config // in effect when the prompt arrived: the permissions and the environment say it
}

// run is the claimed turn: the user's message shown to the other editors,
// then /compact, or the prompt with what the model must hear first
// (input). The session is released before this editor's answer waits for
// its updates: an editor that stopped reading holds only its own reply.
func (t *promptTurn) run(rctx context.Context) (any, error) {
	c, s, content := t.c, t.s, t.content
	s.offerCommands()
	if content.text != "" || len(content.images) == 0 {
		s.broadcast(acp.UpdateUserMessageText(content.text), c)
	}
	for _, v := range imageViews(content.images) {
		s.broadcast(acp.UpdateUserMessage(v), c)
	}
	var stop session.StopReason
	var err error
	mark := markUsage(t.tctx, t.db, s.id)
	title := content.title()
	if len(content.images) == 0 && isCompactCommand(content.text) {
		stop, err = s.conv.CompactAsked(t.tctx, "/compact", updates{s})
		title = ""
	} else if len(content.images) == 0 && isUndoCommand(content.text) {
		stop, title = t.undo(), "" // undo.go
	} else {
		s.turnKey.Store(time.Now().UnixNano()) // the key of this turn's checkpoint (checkpoints.go)
		stop, err = s.conv.Prompt(t.tctx, t.input(), updates{s})
		s.commands.settle() // what its commands' processes changed up to now (command_checkpoints.go)
	}
	t.ended(context.WithoutCancel(t.tctx), title)
	t.release()
	// The turn's updates reach this client before its answer; an editor
	// that is disconnected meanwhile gets no answer.
	c.out.flush(jsonrpc2.DetachContext(rctx))
	if err != nil {
		return nil, turnError(err)
	}
	return acp.PromptResponse{StopReason: acp.StopReason(stop), Usage: mark.since(jsonrpc2.DetachContext(rctx), t.db, s.id)}, nil
}

// input is what the prompt sends the model: notices for the editors
// first, then the permissions and the environment when they changed
// (environment.go), the
// context delta, a slash command's instructions (commands.go), and the
// user's message.
func (t *promptTurn) input() []json.RawMessage {
	s, content := t.s, t.content
	var input []json.RawMessage
	if note := s.ws.watchNotice(); note != "" && !s.toldWatch {
		s.toldWatch = true
		updates{s}.NoticeWith(session.NoticeWarning, note)
	}
	s.tellMCP(updates{s})
	input = append(input, t.contextChanges()...)
	input = append(input, s.undone.take()...) // what /undo changed (undo.go)
	if delta := t.contextDelta(t.tctx); delta != "" {
		input = append(input, session.DeveloperMessage(delta))
	}
	if cmd := commandPrompt(content.text); cmd != "" {
		input = append(input, session.DeveloperMessage(cmd))
	}
	return append(input, session.UserMessage(content.text, content.images...))
}
