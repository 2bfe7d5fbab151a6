package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// inotifyInstances counts this process's inotify descriptors.
func inotifyInstances(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && l == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// 151 open workspaces — more than fs.inotify.max_user_instances allows one
// user (128 by default) — share the daemon's inotify instance: the process
// holds at most 4, every workspace is watched by inotify, and a change
// reaches the sessions of its own workspace only.
func TestManyWorkspacesShareOneInotifyInstance(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const n = 151
	dirs := make([]string, n)
	ids := make([]acp.SessionId, n)
	for i := range n {
		dirs[i] = filepath.Join(base, fmt.Sprintf("w%03d", i))
		if err := os.MkdirAll(filepath.Join(dirs[i], "src"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dirs[i], "src", "main.go"), []byte("package main\n"), 0o644)
		ids[i] = ed.newSession(dirs[i])
	}
	got := inotifyInstances(t)
	t.Logf("%d workspaces open: the process holds %d inotify instances", n, got)
	if got > 4 {
		t.Errorf("%d inotify instances for %d workspaces, want at most 4", got, n)
	}
	var st rpc.Status
	ed.must(rpc.MethodHearthStatus, nil, &st)
	if len(st.Workspaces) != n {
		t.Fatalf("%d workspaces open, want %d", len(st.Workspaces), n)
	}
	for _, ws := range st.Workspaces {
		if ws.Watch != "inotify" {
			t.Errorf("%s: watch %q, want inotify", ws.Root, ws.Watch)
		}
	}

	os.WriteFile(filepath.Join(dirs[n-1], "src", "mine.go"), []byte("package main\n"), 0o644)
	os.WriteFile(filepath.Join(dirs[0], "src", "theirs.go"), []byte("package main\n"), 0o644)
	before := len(td.sim.Received())
	ed.prompt(ids[n-1], "what changed?")
	recs := td.waitRequests(before + 1)
	texts := strings.Join(inputTexts(recs[len(recs)-1]), "\n")
	if !strings.Contains(texts, "src/mine.go") || strings.Contains(texts, "theirs.go") {
		t.Errorf("the last workspace's delta is not its own change:\n%s", texts)
	}
}
