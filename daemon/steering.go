package daemon

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
)

// _session/steering, as codex-acp and claude-agent-acp define it: more
// input for the session's running turn, which the model reads once — in
// the response that streams (response.steer) or in the turn's next
// request. With no turn running it starts one with the input, unless the
// request says the idle session needs a prompt.

// The outcomes of _session/steering.
const (
	steerInjected       = "injected"
	steerStartedNewTurn = "startedNewTurn"
	steerFailed         = "failed"
)

// idlePromptRequired is the idleBehavior that refuses a steer when no
// turn runs.
const idlePromptRequired = "promptRequired"

// steeringRequest is _session/steering's params.
type steeringRequest struct {
	SessionID string             `json:"sessionId"`
	Prompt    []acp.ContentBlock `json:"prompt"`
	Meta      *struct {
		Steering *struct {
			IdleBehavior string `json:"idleBehavior,omitempty"`
		} `json:"steering,omitempty"`
	} `json:"_meta,omitempty"`
}

// steeringResponse is _session/steering's result.
type steeringResponse struct {
	Outcome string `json:"outcome"`
}

func (r steeringRequest) promptRequired() bool {
	return r.Meta != nil && r.Meta.Steering != nil && r.Meta.Steering.IdleBehavior == idlePromptRequired
}

// steeringMeta is what initialize's _meta says of steering.
func steeringMeta() map[string]any {
	return map[string]any{"steering": map[string]any{"supported": true}}
}

// prepareSteering is _session/steering's first stage, on the read loop: it
// checks the request and finds the session. The second stage gives the
// running turn the input, or starts a turn; steers to one session go one
// at a time (openSession.steering).
func (c *clientConn) prepareSteering(ctx context.Context, params json.RawMessage) (func(context.Context) (any, error), error) {
	if !c.initialized.Load() {
		return nil, rpc.ErrNotInitialized
	}
	ctx = jsonrpc2.DetachContext(ctx)
	var req steeringRequest
	if err := rpc.DecodeParams(params, &req); err != nil {
		return nil, err
	}
	if req.SessionID == "" {
		return nil, rpc.InvalidParams("sessionId", "missing")
	}
	content, err := readPrompt(req.Prompt)
	if err != nil {
		return nil, err
	}
	if err := c.d.Config().loginError(); err != nil {
		return nil, err
	}
	s, err := c.d.lookup(ctx, req.SessionID)
	if err != nil {
		return nil, err
	}
	return func(context.Context) (any, error) {
		s.steering.Lock()
		defer s.steering.Unlock()
		out, err := s.conv.Steer(ctx, []json.RawMessage{session.UserMessage(content.text, content.images...)})
		switch {
		case err != nil:
			c.d.log.Warn("steer", "session", s.id, "err", err)
			return steeringResponse{Outcome: steerFailed}, nil
		case out == session.SteerInjected:
			s.broadcast(acp.UpdateUserMessageText(content.text), c)
			return steeringResponse{Outcome: steerInjected}, nil
		case req.promptRequired():
			return steeringResponse{Outcome: steerFailed}, nil
		}
		if err := c.startSteeredTurn(ctx, s, content); err != nil {
			return nil, err
		}
		return steeringResponse{Outcome: steerStartedNewTurn}, nil
	}, nil
}

// startSteeredTurn starts a turn of s with content, as session/prompt
// would (queued behind a turn that is about to run), without a prompt
// request to answer: its updates reach the session's editors. The turn's
// goroutine is counted with the daemon's turns, which Shutdown drains.
func (c *clientConn) startSteeredTurn(ctx context.Context, s *openSession, content promptContent) error {
	d := c.d
	tctx, release, await, closed, err := d.startTurn(c, s)
	if closed {
		return fmt.Errorf("%w: %s", rpc.ErrUnknownSession, s.id)
	}
	if err != nil {
		return err
	}
	t := &promptTurn{c: c, s: s, content: content, tctx: tctx, release: release, db: d.db, log: d.log, cfg: d.Config()}
	go func() {
		if !await() {
			return
		}
		defer release()
		if _, err := t.run(context.WithoutCancel(ctx)); err != nil {
			d.log.Warn("steered turn", "session", s.id, "err", err)
		}
	}()
	return nil
}
