package daemon

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
)

// Credentials is where the daemon's API key is stored between runs, for
// ACP's authenticate and logout: hearth serve gives one that reads and edits
// its env file (~/.config/hearth/env). Its methods may be called from any
// connection's goroutine; the implementation serialises them.
type Credentials interface {
	// Reload reads the stored key again and reconfigures the daemon with it
	// (Daemon.Reload), as SIGHUP does.
	Reload() error
	// Forget removes the stored key, then reloads.
	Forget() error
}

// loginMethod is the id of hearth's one auth method: `hearth login` in a
// terminal.
const loginMethod = "login"

// LoginNeeded reports a configuration that cannot answer a prompt until
// the user logs in: the simulator not wanted (HEARTH_SIMULATOR=off, which
// asks for a key) and no API key.
func (c Config) LoginNeeded() bool {
	return c.NoSimulator && c.APIKey == ""
}

// errLogin is what a session method answers while LoginNeeded: ACP's
// auth_required, so that the editor offers the login.
var errLogin = fmt.Errorf("%w: no OpenAI API key, and the simulator is off (HEARTH_SIMULATOR=off): "+
	"run `hearth login` in a terminal (or set OPENAI_API_KEY), then try again", rpc.ErrAuthRequired)

// loginError is errLogin while c needs a login.
func (c Config) loginError() error {
	if c.LoginNeeded() {
		return errLogin
	}
	return nil
}

// authMethods are the ways to log in offered at initialize: `hearth login`,
// which reads a key on the terminal and stores it. An editor that runs
// terminal auth methods (clientCapabilities.auth.terminal) gets it as one
// (ACP: it runs the agent's command with args in a terminal and does not
// call authenticate); another gets it as an agent method whose description
// says to run it, answered by authenticate.
func authMethods(terminal bool) []acp.AuthMethod {
	const name = "Log in with an OpenAI API key"
	if terminal {
		desc := "Asks for an OpenAI API key in a terminal, checks it, and stores it for the hearth daemon."
		return []acp.AuthMethod{{Terminal: &acp.AuthMethodTerminalInline{Type: "terminal", Id: loginMethod, Name: name,
			Description: &desc, Args: []string{"login"}}}}
	}
	desc := "Run `hearth login` in a terminal (it asks for the key, checks it and stores it), then choose this."
	return []acp.AuthMethod{{Agent: &acp.AuthMethodAgent{Id: loginMethod, Name: name, Description: &desc}}}
}

// authenticate is ACP's authenticate with the "login" method: the daemon
// reads its stored key again — `hearth login` has just stored one — and
// answers ok when it has a key, or a model API of its own, now; else
// auth_required, saying how to log in.
func (c *clientConn) authenticate(ctx context.Context, params json.RawMessage) (any, error) {
	var req acp.AuthenticateRequest
	if err := rpc.DecodeParams(params, &req); err != nil {
		return nil, err
	}
	if req.MethodId != loginMethod {
		return nil, rpc.InvalidParams("methodId", "hearth has one auth method, %q; got %q", loginMethod, req.MethodId)
	}
	d := c.d
	if cr := d.Config().Credentials; cr != nil {
		if err := cr.Reload(); err != nil {
			return nil, fmt.Errorf("%w: reading the stored key: %w", rpc.ErrAuthRequired, err)
		}
	}
	cfg := d.Config()
	if cfg.APIKey == "" && (cfg.Simulator || cfg.BaseURL == "" || cfg.NoSimulator) {
		return nil, fmt.Errorf("%w: no OpenAI API key is stored: run `hearth login` in a terminal, then try again", rpc.ErrAuthRequired)
	}
	return acp.AuthenticateResponse{}, nil
}

// logout is ACP's logout: the stored key is removed and the daemon goes on
// without it (the simulator, or auth_required with HEARTH_SIMULATOR=off).
// A key in the daemon's own environment stays: it was not stored by login.
func (c *clientConn) logout(ctx context.Context, params json.RawMessage) (any, error) {
	var req acp.LogoutRequest
	if len(params) > 0 && string(params) != "null" {
		if err := rpc.DecodeParams(params, &req); err != nil {
			return nil, err
		}
	}
	cr := c.d.Config().Credentials
	if cr == nil {
		return nil, fmt.Errorf("%w: this daemon keeps no stored key (it runs inside another command)", rpc.ErrInternal)
	}
	if err := cr.Forget(); err != nil {
		return nil, fmt.Errorf("%w: removing the stored key: %w", rpc.ErrInternal, err)
	}
	return acp.LogoutResponse{}, nil
}
