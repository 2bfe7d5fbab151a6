package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// inputOf returns the texts of the new input of the request that carried
// the user's message text, joined by lines.
func (td *testDaemon) inputOf(text string) string {
	td.t.Helper()
	for _, r := range td.sim.Received() {
		texts := inputTexts(r)
		if len(texts) > 0 && texts[len(texts)-1] == "user: "+text {
			return strings.Join(texts, "\n")
		}
	}
	td.t.Fatalf("no request carried %q", text)
	return ""
}

// readDirective has the simulated model read path.
func readDirective(path string) string {
	return `r sim:calls=1 sim:tool=read_file sim:args={"path":"` + path + `"}`
}

// In a repository whose build/ directory is source, as kubernetes' is, a
// change to a file the model read there reaches its next request as a
// diff.
func TestDeltaReportsBuildDirectory(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	const rel = "build/pause/windows/wincat/wincat.go"
	path := filepath.Join(td.root, filepath.FromSlash(rel))
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.MkdirAll(filepath.Join(td.root, ".git"), 0o755)
	os.WriteFile(filepath.Join(td.root, ".gitignore"), []byte("/_output\n"), 0o644)
	os.WriteFile(path, []byte("package main\n\nfunc main() { exit(0) }\n"), 0o644)
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.prompt(id, readDirective(rel))

	os.WriteFile(path, []byte("package main\n\nfunc main() { exit(1) }\n"), 0o644)
	ed.prompt(id, "what changed?")
	delta := td.inputOf("what changed?")
	for _, want := range []string{rel, "-func main() { exit(0) }", "+func main() { exit(1) }"} {
		if !strings.Contains(delta, want) {
			t.Errorf("the model's next input lacks %q:\n%s", want, delta)
		}
	}
}

// A workspace with more directories than HEARTH_WATCH_MAX_DIRS is watched
// where the session's tools go: status and the first answer say so, the
// model is told once what it will not hear of, a change to a file it read
// deep in the tree reaches it, and one in a directory no tool used does not.
func TestWorkspacePastTheWatchBudget(t *testing.T) {
	td := startDaemonWith(t, sim.Options{}, "", func(c *Config) {
		c.WatchMaxDirs = 3 // the workspace has five: the root, src, pkg, pkg/a and other
	})
	for _, p := range []string{"pkg/a/b.go", "other/x.go"} {
		os.MkdirAll(filepath.Join(td.root, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(td.root, p), []byte("package x\n"), 0o644)
	}
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	var st rpc.Status
	ed.must(rpc.MethodHearthStatus, nil, &st)
	if len(st.Workspaces) != 1 || !strings.HasPrefix(st.Workspaces[0].Watch, "partial: 1 directory watched, of a tree of more than 3") {
		t.Fatalf("status: %+v, want watch partial, the root alone", st.Workspaces)
	}
	ed.prompt(id, readDirective("pkg/a/b.go"))
	if got := agentText(ed.updates()); !strings.Contains(got, "file watching is partial") {
		t.Errorf("first answer %q does not say the workspace is watched in part", got)
	}
	if first := td.inputOf(readDirective("pkg/a/b.go")); !strings.Contains(first, "too many to watch") {
		t.Errorf("the model was not told what it will not hear of:\n%s", first)
	}

	os.WriteFile(filepath.Join(td.root, "pkg", "a", "b.go"), []byte("package x // changed\n"), 0o644)
	os.WriteFile(filepath.Join(td.root, "other", "x.go"), []byte("package x // unseen\n"), 0o644)
	ed.forget()
	ed.prompt(id, "what changed?")
	delta := td.inputOf("what changed?")
	if !strings.Contains(delta, "+package x // changed") || strings.Contains(delta, "other/x.go") {
		t.Errorf("the delta is not the read file's change alone:\n%s", delta)
	}
	if strings.Contains(delta, "too many to watch") {
		t.Errorf("the model was told twice:\n%s", delta)
	}
	if got := agentText(ed.updates()); strings.Contains(got, "file watching") {
		t.Errorf("the notice was repeated: %q", got)
	}
	ed.must(rpc.MethodHearthStatus, nil, &st)
	if !strings.HasPrefix(st.Workspaces[0].Watch, "partial: 3 directories watched") {
		t.Errorf("after the read: watch %q, want the root, pkg and pkg/a", st.Workspaces[0].Watch)
	}
}
