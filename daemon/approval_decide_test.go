package daemon

import (
	"testing"

	"github.com/hearthd/hearth/workspace/sandbox"
)

// TestDecideCommand: the decision of every mode for a command that only
// reads (run with the workspace read-only in every mode that runs it), one
// a rule covers, one it does not, and an escalation; a rule never gives
// more than the mode's sandbox.
func TestDecideCommand(t *testing.T) {
	rules := []string{"go test"}
	esc := CommandRequest{Command: "go test ./...", Escalate: true, Justification: "why?"}
	for _, c := range []struct {
		mode   string
		req    CommandRequest
		refuse bool
		ask    bool
		access sandbox.Access
		rules  string
	}{
		{ModeReadOnly, CommandRequest{Command: "git status"}, true, false, 0, ""},
		{ModeAsk, CommandRequest{Command: "git status"}, false, false, sandbox.AccessReadOnly, ""},
		{ModeAutoEdit, CommandRequest{Command: "rg -n x | head"}, false, false, sandbox.AccessReadOnly, ""},
		{ModeAsk, CommandRequest{Command: "go test ./..."}, false, false, sandbox.AccessWorkspace, ""},
		{ModeAsk, CommandRequest{Command: "go build ./..."}, false, true, sandbox.AccessWorkspace, "go build"},
		{ModeAsk, CommandRequest{Command: "sh -c 'go test'"}, false, true, sandbox.AccessWorkspace, ""},
		{ModeAsk, esc, false, true, sandbox.AccessEscalated, ""},
		{ModeAutoEdit, esc, false, true, sandbox.AccessEscalated, ""},
		{ModeFullAuto, esc, true, false, 0, ""},
		{ModeFullAuto, CommandRequest{Command: "rm -rf build"}, false, false, sandbox.AccessWorkspace, ""},
		{ModeFullAuto, CommandRequest{Command: "cat a.txt"}, false, false, sandbox.AccessReadOnly, ""}, // run as a read: it must not write
	} {
		v := decideCommand(c.mode, c.req, rules)
		var got string
		if len(v.rules) > 0 {
			got = v.rules[0]
		}
		if (v.refuse != "") != c.refuse || v.ask != c.ask || v.grant.Access != c.access || got != c.rules || v.grant.Escalated != (c.access == sandbox.AccessEscalated) {
			t.Errorf("%s %+v: %+v", c.mode, c.req, v)
		}
	}
	if n := (CommandGrant{Escalated: true}).Network(NetworkMode, ModeAsk); n.Off {
		t.Error("an escalated command has no network")
	}
	if n := (CommandGrant{Escalated: true}).Network(NetworkOff, ModeAsk); !n.Off {
		t.Error("an escalation overrode HEARTH_SHELL_NETWORK=off")
	}
	if n := (CommandGrant{}).Network(NetworkMode, ModeFullAuto); !n.Off {
		t.Error("a rule or a read-only command got the network full-auto does not give")
	}
}
