package daemon

import (
	"strings"
	"sync"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// storedKey is a Credentials keeping the key in memory, as hearth serve's
// keeps it in the env file: Reload puts the stored key in the daemon's
// configuration.
type storedKey struct {
	mu  sync.Mutex
	td  *testDaemon
	key string // "" = none stored
}

func (s *storedKey) store(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

func (s *storedKey) Reload() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cfg := s.td.d.Config()
	cfg.APIKey = s.key
	return s.td.d.Reload(cfg)
}

func (s *storedKey) Forget() error {
	s.store("")
	return s.Reload()
}

// With no key and the simulator off, session/new answers auth_required
// naming `hearth login`; authenticate reads the stored key again and
// answers ok once one is there, after which sessions work; logout removes
// it. initialize offers the login as a terminal method to an editor that
// runs them, else as an agent method, and advertises logout.
func TestLoginAuthenticateLogout(t *testing.T) {
	const key = "sk-test-login"
	creds := &storedKey{}
	td := startDaemonWith(t, sim.Options{APIKey: key}, "", func(c *Config) {
		c.NoSimulator, c.Credentials = true, creds
	})
	creds.td = td

	term := td.connect()
	var init acp.InitializeResponse
	term.must(rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber,
		ClientCapabilities: acp.ClientCapabilities{Auth: acp.AuthCapabilities{Terminal: true}}}, &init)
	if len(init.AuthMethods) != 1 || init.AuthMethods[0].Terminal == nil || init.AuthMethods[0].Terminal.Id != "login" ||
		strings.Join(init.AuthMethods[0].Terminal.Args, " ") != "login" || init.AgentCapabilities.Auth.Logout == nil {
		t.Fatalf("initialize with terminal auth: %+v %+v", init.AuthMethods, init.AgentCapabilities.Auth)
	}
	ed := td.connect()
	ed.must(rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}, &init)
	if len(init.AuthMethods) != 1 || init.AuthMethods[0].Agent == nil || init.AuthMethods[0].Agent.Id != "login" ||
		init.AuthMethods[0].Agent.Description == nil || !strings.Contains(*init.AuthMethods[0].Agent.Description, "hearth login") {
		t.Fatalf("initialize without terminal auth: %+v", init.AuthMethods)
	}

	authRequired := func(what string, err error) {
		t.Helper()
		if w := rpc.WireError(err); w == nil || w.Code != -32000 || !strings.Contains(w.Message, "hearth login") {
			t.Fatalf("%s: %v, want auth_required naming hearth login", what, err)
		}
	}
	err := ed.call(rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	authRequired("session/new without a key", err)
	authRequired("authenticate with nothing stored", ed.call(rpc.MethodAuthenticate, acp.AuthenticateRequest{MethodId: "login"}, nil))
	if err := ed.call(rpc.MethodAuthenticate, acp.AuthenticateRequest{MethodId: "oauth"}, nil); rpc.WireError(err).Code != -32602 {
		t.Errorf("authenticate with an unknown method: %v", err)
	}

	creds.store(key) // hearth login, in the editor's terminal
	ed.must(rpc.MethodAuthenticate, acp.AuthenticateRequest{MethodId: "login"}, nil)
	id := ed.newSession(td.root)
	if stop := ed.prompt(id, "hello"); stop != acp.StopReasonEndTurn {
		t.Fatalf("prompt after login: %q", stop)
	}

	ed.must(rpc.MethodLogout, acp.LogoutRequest{}, nil)
	if td.d.Config().APIKey != "" {
		t.Error("the key is still in use after logout")
	}
	err = ed.call(rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock("again")}}, nil)
	authRequired("prompt after logout", err)
}
