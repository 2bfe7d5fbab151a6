package workspace

import "github.com/hearthd/hearth/workspace/sandbox"

// UsePlantEvents has the guard that finds the repositories ts's commands
// plant limit its scan after each command to what ev, the workspace's
// file watcher, saw change (sandbox/planted_events.go). Call it before
// the first command. A function, not a method: Toolset has its share.
func UsePlantEvents(ts *Toolset, ev sandbox.Events) {
	if ts.plants != nil {
		ts.plants.UseEvents(ev)
	}
}
