package daemon

import (
	"errors"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// A store that fails to read a session is not an unknown session: the
// editor must not be told the session is gone (it would drop it) when the
// database could not answer. Only a session the store does not hold is
// -32002.
func TestStoreFailureIsNotUnknownSession(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.c.Close()
	td.d.Close()

	td.restart() // the session is in the store, not open: a lookup reads it
	ed2 := td.connect()
	ed2.initialize()
	var wire *jsonrpc2.Error
	err := ed2.call(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: "ses_nope", Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	if !errors.As(err, &wire) || wire.Code != rpc.CodeResourceNotFound {
		t.Fatalf("load of a session the store does not hold: %v, want %d", err, rpc.CodeResourceNotFound)
	}
	if err := td.d.db.Close(); err != nil {
		t.Fatal(err)
	}
	calls := map[string]any{
		rpc.MethodSessionPrompt: acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}},
		rpc.MethodSessionLoad:   acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}},
	}
	for method, params := range calls {
		err := ed2.call(method, params, nil)
		if !errors.As(err, &wire) {
			t.Fatalf("%s with the store closed: %v, want an error reply", method, err)
		}
		if wire.Code == rpc.CodeResourceNotFound || strings.Contains(wire.Message, "unknown session") {
			t.Errorf("%s with the store closed: %d %q, want a store failure, not an unknown session", method, wire.Code, wire.Message)
		}
		if !strings.Contains(wire.Message, "database closed") {
			t.Errorf("%s with the store closed: %q does not say why", method, wire.Message)
		}
	}
}
