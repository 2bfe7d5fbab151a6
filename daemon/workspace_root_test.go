package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// A session opened in a subdirectory of a git repository works in the
// repository: its workspace is the repository's root, its relative paths
// start in the subdirectory and may lead above it, never out of the root;
// it is listed under the directory it was opened in, and keeps that
// directory after a restart.
func TestSessionInSubdirectoryWorksInRepository(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	os.Mkdir(filepath.Join(td.root, ".git"), 0o755)
	sub := filepath.Join(td.root, "sub", "dir")
	os.MkdirAll(sub, 0o755)
	os.WriteFile(filepath.Join(sub, "here.txt"), []byte("in the subdirectory\n"), 0o644)
	os.WriteFile(filepath.Join(filepath.Dir(td.root), "outside.txt"), []byte("not yours\n"), 0o644)

	ed := td.connect()
	ed.initialize()
	id := ed.newSession(sub)
	td.d.mu.Lock()
	_, atRoot := td.d.workspaces[td.root]
	n := len(td.d.workspaces)
	td.d.mu.Unlock()
	if !atRoot || n != 1 {
		t.Fatalf("workspaces open: %d, at the repository root: %v", n, atRoot)
	}
	ed.prompt(id, "read ../../a.txt")
	if got := agentText(ed.updates()); !strings.Contains(got, "alpha") {
		t.Errorf("read ../../a.txt from sub/dir answered %q", got)
	}
	ed.forget()
	ed.prompt(id, "read ../../../outside.txt")
	if got := agentText(ed.updates()); strings.Contains(got, "not yours") || !strings.Contains(got, "outside the workspace") {
		t.Errorf("a path out of the repository answered %q", got)
	}

	var list acp.ListSessionsResponse
	ed.must(rpc.MethodSessionList, acp.ListSessionsRequest{Cwd: &sub}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].SessionId != id || list.Sessions[0].Cwd != sub {
		t.Errorf("sessions listed in %s: %+v", sub, list.Sessions)
	}
	root := td.root
	ed.must(rpc.MethodSessionList, acp.ListSessionsRequest{Cwd: &root}, &list)
	if len(list.Sessions) != 0 {
		t.Errorf("sessions listed at the root: %+v", list.Sessions)
	}

	td.d.Close()
	td.restart()
	ed = td.connect()
	ed.initialize()
	ed.prompt(id, "list")
	if got := agentText(ed.updates()); !strings.Contains(got, "here.txt") || strings.Contains(got, "a.txt") {
		t.Errorf("list in the reopened session answered %q, want sub/dir's entries", got)
	}
}

// A repository whose root may not be a workspace (a dotfiles repository at
// $HOME) is not opened whole: the workspace is the session's directory.
// Outside any repository, it is the directory too.
func TestWorkspaceRootFallsBackToTheDirectory(t *testing.T) {
	home, err := filepath.EvalSymlinks(os.Getenv("HOME")) // a temp dir (internal/testenv)
	if err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(home, "proj", "sub")
	os.MkdirAll(proj, 0o755)
	os.Mkdir(filepath.Join(home, ".git"), 0o755)
	defer os.RemoveAll(filepath.Join(home, ".git"))
	cfg := Config{DataDir: filepath.Join(t.TempDir(), "data"), Socket: filepath.Join(t.TempDir(), "s", "sock")}
	root, why := workspaceRoot(proj, cfg)
	if root != proj || !strings.Contains(why, "home directory") {
		t.Errorf("in a repository at $HOME: root %s (%s), want %s", root, why, proj)
	}
	os.Mkdir(filepath.Join(home, "proj", ".git"), 0o755)
	if root, why := workspaceRoot(proj, cfg); root != filepath.Join(home, "proj") || why != "" {
		t.Errorf("in a repository at ~/proj: root %s (%s)", root, why)
	}
	// A worktree's or a submodule's .git is a file.
	wt := filepath.Join(t.TempDir(), "wt")
	os.MkdirAll(filepath.Join(wt, "a"), 0o755)
	os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: /elsewhere\n"), 0o644)
	wt, _ = filepath.EvalSymlinks(wt)
	if root, _ := workspaceRoot(filepath.Join(wt, "a"), cfg); root != wt {
		t.Errorf("in a worktree: root %s, want %s", root, wt)
	}
	none := t.TempDir()
	none, _ = filepath.EvalSymlinks(none)
	if root, _ := workspaceRoot(none, cfg); root != none {
		t.Errorf("outside any repository: root %s, want %s", root, none)
	}
}
