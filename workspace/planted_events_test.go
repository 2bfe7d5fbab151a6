package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hearthd/hearth/workspace/watch"
)

// countedEvents is a watcher whose event windows are counted, to tell
// which scan the guard ran: limited to the events (complete) or full.
type countedEvents struct {
	*watch.Watcher
	complete, incomplete atomic.Int32
}

func (c *countedEvents) EventPaths(mark uint64) ([]string, uint64, bool) {
	paths, next, complete := c.Watcher.EventPaths(mark)
	if complete {
		c.complete.Add(1)
	} else {
		c.incomplete.Add(1)
	}
	return paths, next, complete
}

// watchPlants gives ts's plant guard the events of a watcher of its
// workspace, counted.
func watchPlants(t *testing.T, ts *Toolset) *countedEvents {
	t.Helper()
	w, err := watch.New(ts.at.root, watch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	ev := &countedEvents{Watcher: w}
	UsePlantEvents(ts, ev)
	return ev
}

// TestPlantedRepoThroughEvents: with the workspace's watcher, the scan
// after a command visits only what the events name, and still finds
// every way of planting TestPlantedRepoWays tries — and a repository
// planted inside a directory the watcher ignores (node_modules, named in
// .gitignore), from which no event comes.
func TestPlantedRepoThroughEvents(t *testing.T) {
	ts, dir := plantedTree(t)
	writeFile(t, filepath.Join(dir, ".gitignore"), "node_modules/\n")
	writeFile(t, filepath.Join(dir, "node_modules", "pkg", "deep", "index.js"), "x\n")
	ev := watchPlants(t, ts)
	runShell(t, ts, "true", 0) // the first walk: full
	ev.complete.Store(0)
	ev.incomplete.Store(0)

	res := runShell(t, ts, "git init -q node_modules/pkg/deep && git -C node_modules/pkg/deep config core.fsmonitor evil", 0)
	assertDisarmed(t, "in an ignored directory", res, dir, "node_modules/pkg/deep/.git", "evil")
	plantedWays(t, ts, dir)

	if n := ev.incomplete.Load(); n != 0 || ev.complete.Load() == 0 {
		t.Errorf("scans limited to the events: %d, full: %d; want every scan limited", ev.complete.Load(), n)
	}
}

// TestPlantedRepoEventsMissed: when the events cannot be trusted (the
// watcher is closed: Sync fails), the full scan runs and still finds what
// a command planted.
func TestPlantedRepoEventsMissed(t *testing.T) {
	ts, dir := plantedTree(t)
	ev := watchPlants(t, ts)
	runShell(t, ts, "true", 0)
	ev.Close()
	res := runShell(t, ts, "mkdir -p src/a/x && git init -q src/a/x && git -C src/a/x config core.pager evil", 0)
	assertDisarmed(t, "watcher closed", res, dir, "src/a/x/.git", "evil")
	if !strings.Contains(res.Output, "core.pager") {
		t.Errorf("the note does not say why: %s", res.Output)
	}
	if _, err := os.Stat(filepath.Join(dir, "src/a/x/.git/config.hearth-disarmed")); err != nil {
		t.Error(err)
	}
}

// noteChanges is a CommandChanges that keeps nothing: it lets the sandbox
// trap a command's changes, and notes whether the last one was.
type noteChanges struct{ trapped atomic.Bool }

func (*noteChanges) Before(string) {}

func (n *noteChanges) Begin() func(bool) { return func(t bool) { n.trapped.Store(t) } }

// TestPlantedRepoScanSkippedWhenUntouched: a command the trap saw change
// nothing needs no scan (no look at the events, no stat); the next command
// that plants is still caught, and so is one that plants through a path
// outside the workspace's view of it (a write to /tmp first).
func TestPlantedRepoScanSkippedWhenUntouched(t *testing.T) {
	useSandbox(t)
	ts, dir := plantedTree(t)
	cc := &noteChanges{}
	ts.Commands = cc
	ev := watchPlants(t, ts)
	runShell(t, ts, "true", 0) // the first walk: full
	ev.complete.Store(0)
	ev.incomplete.Store(0)

	res := runShell(t, ts, "cat src/a/b/main.go", 0)
	if !strings.Contains(res.Output, "package b") {
		t.Fatalf("cat: %s", res.Output)
	}
	if !cc.trapped.Load() {
		t.Skip("the sandbox has no cells here") // cells need user namespaces
	}
	if n := ev.complete.Load() + ev.incomplete.Load(); n != 0 {
		t.Errorf("a command that changed nothing was followed by %d scan(s)", n)
	}
	res = runShell(t, ts, "echo x > /tmp/x && git init -q src/a/p && git -C src/a/p config core.fsmonitor evil", 0)
	assertDisarmed(t, "after an untouched command", res, dir, "src/a/p/.git", "evil")
	if n := ev.complete.Load() + ev.incomplete.Load(); n != 1 {
		t.Errorf("a command that planted was followed by %d scan(s), want 1", n)
	}
}
