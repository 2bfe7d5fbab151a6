package daemon

import (
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/session/sim"
)

// A read's call is titled after what it reads from the moment it runs
// (in_progress), not only once it is done: reads are not asked about, so
// no preview titles them.
func TestReadTitledWhileItRuns(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	if stop := ed.prompt(id, simCall(t, "read_file", map[string]string{"path": "hello.txt"})); stop != acp.StopReasonEndTurn {
		t.Fatalf("stop %s", stop)
	}
	for _, u := range ed.updates() {
		tu := u.ToolCallUpdate
		if tu == nil || tu.Status == nil || *tu.Status != acp.ToolCallStatusInProgress {
			continue
		}
		if tu.Title == nil || *tu.Title != "Read hello.txt" {
			t.Fatalf("the running read's update: title %v; want \"Read hello.txt\"", tu.Title)
		}
		return
	}
	t.Fatal("no in_progress update for the read")
}
