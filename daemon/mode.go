package daemon

import (
	"context"
	"encoding/json"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
)

// Session modes, from the most to the least careful. The ids are a public
// contract (editors show and send them).
const (
	ModeReadOnly = "read-only" // no writes, no shell
	ModeAsk      = "ask"       // writes and shell ask first, but commands that only read (the default)
	ModeAutoEdit = "auto-edit" // edits inside the workspace run; shell asks, but commands that only read
	ModeFullAuto = "full-auto" // everything runs without asking
)

// modes are the session modes in order; their descriptions say what the
// shell's network is in each (sessionModes).
var modes = []acp.SessionMode{
	{Id: ModeReadOnly, Name: "Read only", Description: ptr("The agent reads and searches; it cannot write files or run commands.")},
	{Id: ModeAsk, Name: "Ask", Description: ptr("File writes and commands ask for your permission first; commands that only read run at once.")},
	{Id: ModeAutoEdit, Name: "Auto-edit", Description: ptr("Edits inside the workspace run without asking; commands still ask, but those that only read.")},
	{Id: ModeFullAuto, Name: "Full auto", Description: ptr("Edits and commands run without asking.")},
}

func ptr[T any](v T) *T { return &v }

func validMode(id string) bool {
	for _, m := range modes {
		if string(m.Id) == id {
			return true
		}
	}
	return false
}

// sessionModes are the modes with their descriptions completed by what
// their commands' network is under setting (HEARTH_SHELL_NETWORK), on this
// machine: a network that cannot be taken away is said so.
func sessionModes(setting string) []acp.SessionMode {
	out := make([]acp.SessionMode, len(modes))
	for i, m := range modes {
		m.Description = ptr(*m.Description + networkNote(setting, string(m.Id)))
		out[i] = m
	}
	return out
}

// modeState is what session/new and session/load answer with.
func (st *settings) modeState(current string) *acp.SessionModeState {
	if !validMode(current) {
		current = ModeAsk
	}
	return &acp.SessionModeState{AvailableModes: sessionModes(st.network()), CurrentModeId: acp.SessionModeId(current)}
}

func (c *clientConn) setMode(ctx context.Context, params json.RawMessage) (any, error) {
	var req acp.SetSessionModeRequest
	if err := rpc.DecodeParams(params, &req); err != nil {
		return nil, err
	}
	if !validMode(string(req.ModeId)) {
		return nil, rpc.InvalidParams("modeId", "unknown mode %q; one of read-only, ask, auto-edit, full-auto", req.ModeId)
	}
	s, err := c.d.lookup(ctx, string(req.SessionId))
	if err != nil {
		return nil, err
	}
	s.changing.Lock()
	err = c.d.settings.switchMode(ctx, s, string(req.ModeId))
	s.changing.Unlock()
	if err != nil {
		return nil, err
	}
	c.out.flush(ctx) // the updates reach this editor before the answer
	return acp.SetSessionModeResponse{}, nil
}

// switchMode makes mode s's mode: stored, then told to every attached
// editor, as the current mode (current_mode_update) and in the config
// options (config_option_update), whether session/set_mode or
// session/set_config_option changed it. The caller holds s.changing.
func (st *settings) switchMode(ctx context.Context, s *openSession, mode string) error {
	if err := st.db.SetSessionMode(ctx, s.id, mode); err != nil {
		return err
	}
	s.mu.Lock()
	s.mode = mode
	s.mu.Unlock()
	s.broadcast(acp.SessionUpdate{ConfigOptionUpdate: &acp.SessionConfigOptionUpdate{ConfigOptions: st.sessionOptions(s)}}, nil)
	s.broadcast(acp.SessionUpdate{CurrentModeUpdate: &acp.SessionCurrentModeUpdate{CurrentModeId: acp.SessionModeId(mode)}}, nil)
	return nil
}
