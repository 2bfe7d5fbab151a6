package daemon

import (
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// /compact from an editor compacts the session as a turn of its own and
// says so; editors are offered the command (after their first prompt, or
// with session/load's replay); _hearth/compact does the same by id prefix,
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
	if !offered(b.updates(), "compact") {
		t.Error("session/load did not offer /compact")
	}
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
	// The whole history stays: the first prompt is still an item.
	if !strings.Contains(string(ins.Session.Items[0].Data)+string(ins.Session.Items[1].Data), "walrus") {
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
