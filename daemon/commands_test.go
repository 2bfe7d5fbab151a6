package daemon

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// /compact from an editor compacts the session as a turn of its own and
// says so; editors are offered the command (after session/new's answer,
// and session/load's); _hearth/compact does the same by id prefix,
// and inspect shows each compaction.
func TestSlashCompact(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.prompt(id, "remember the word walrus")
	if !offered(ed.updates(), "compact") {
		t.Error("the prompting editor was not offered /compact")
	}
	ed.forget()
	if stop := ed.prompt(id, "/compact"); stop != acp.StopReasonEndTurn {
		t.Fatalf("/compact: stop %q", stop)
	}
	if got := agentText(ed.updates()); !strings.Contains(got, "compacted this session") {
		t.Errorf("/compact answered %q", got)
	}
	if stop := ed.prompt(id, "still there?"); stop != acp.StopReasonEndTurn {
		t.Fatalf("after /compact: stop %q", stop)
	}

	b := td.connect()
	b.initialize()
	b.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	b.waitFor("session/load's offer of /compact", func(ups []acp.SessionUpdate) bool { return offered(ups, "compact") })
	var res rpc.CompactResult
	b.must(rpc.MethodHearthCompact, rpc.CompactParams{SessionID: string(id)[:10]}, &res)
	if res.SessionID != string(id) || res.Compaction == nil || res.Compaction.Summary == "" {
		t.Fatalf("_hearth/compact: %+v", res)
	}
	var ins rpc.InspectResult
	b.must(rpc.MethodHearthInspect, rpc.InspectParams{SessionID: string(id)}, &ins)
	if ins.Session == nil || len(ins.Session.Compactions) != 2 || ins.Session.Compactions[0].Reason != "asked by the user" {
		t.Fatalf("inspect shows compactions %+v", ins.Session)
	}
	// The whole history stays: the first prompt is still an item (after
	// the permissions and the environment).
	if !strings.Contains(string(ins.Session.Items[2].Data), "walrus") {
		t.Error("the compacted items are no longer stored")
	}
}

func offered(ups []acp.SessionUpdate, name string) bool {
	for _, u := range ups {
		if u.AvailableCommandsUpdate != nil {
			for _, c := range u.AvailableCommandsUpdate.AvailableCommands {
				if c.Name == name {
					return true
				}
			}
		}
	}
	return false
}

// An editor is offered the slash commands right after the answer to
// session/new and to session/load — not before it (the update would name a
// session the editor does not know yet), and without waiting for a prompt.
func TestCommandsOfferedRightAfterNewAndLoad(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	rc := td.raw()
	rc.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n")
	rc.reply()
	rc.send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":` + quote(td.root) + `,"mcpServers":[]}}` + "\n")
	first := rc.next()
	if string(first.ID) != "2" || first.Result == nil {
		t.Fatalf("first message after session/new: %+v, want its answer", first)
	}
	var res acp.NewSessionResponse
	json.Unmarshal(first.Result, &res)
	if u := rc.next(); u.Method != rpc.MethodSessionUpdate || !strings.Contains(string(u.Params), `"available_commands_update"`) ||
		!strings.Contains(string(u.Params), string(res.SessionId)) {
		t.Fatalf("after session/new's answer came %s %s, want available_commands_update", u.Method, u.Params)
	}

	// session/load: the replay, the answer, then the offer.
	ed := td.connect()
	ed.initialize()
	ed.prompt(res.SessionId, "hello")
	rc.send(`{"jsonrpc":"2.0","id":3,"method":"session/load","params":{"sessionId":"` + string(res.SessionId) + `","cwd":` + quote(td.root) + `,"mcpServers":[]}}` + "\n")
	for {
		m := rc.next()
		if m.Method == rpc.MethodSessionUpdate && strings.Contains(string(m.Params), `"available_commands_update"`) {
			t.Fatal("session/load offered the commands before its answer")
		}
		if string(m.ID) == "3" {
			break
		}
	}
	if u := rc.next(); u.Method != rpc.MethodSessionUpdate || !strings.Contains(string(u.Params), `"available_commands_update"`) {
		t.Fatalf("after session/load's answer came %s %s, want available_commands_update", u.Method, u.Params)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
