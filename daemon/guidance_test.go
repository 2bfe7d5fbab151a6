package daemon

import (
	"strings"
	"testing"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/workspace"
)

// Every request of a session carries hearth's guidance as its
// instructions, byte for byte (the warm-up's included), so the second
// prompt chains on the first.
func TestGuidanceIsEveryRequestsInstructions(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.prompt(id, "hello")
	ed.prompt(id, "again")
	recs := td.waitRequests(3)
	for i, r := range recs {
		if r.Instructions != session.Guidance {
			t.Errorf("request %d: instructions are %d bytes, not the guidance's %d", i, len(r.Instructions), len(session.Guidance))
		}
	}
	if last := recs[len(recs)-1]; last.PreviousResponseID == "" {
		t.Errorf("the second prompt went in full; requests: %d", len(recs))
	}
}

// The guidance names every tool the workspace offers with the shell tool
// it is written for (update_plan is named before it exists; MCP tools by
// their prefix).
func TestGuidanceNamesEveryTool(t *testing.T) {
	for _, tool := range workspace.NewToolset(nil).Tools() {
		if !offeredWith(tool.Name, session.ShellCommand) {
			continue // exec_command's families: their guidance is their own
		}
		if !strings.Contains(session.Guidance, tool.Name) {
			t.Errorf("the guidance does not name the tool %s", tool.Name)
		}
	}
}
