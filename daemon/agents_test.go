package daemon

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/workspace"
)

// developerTexts are the texts of the developer messages among items.
func developerTexts(items []json.RawMessage) []string {
	var out []string
	for _, it := range items {
		var m struct {
			Type, Role string
			Content    []struct{ Text string }
		}
		if json.Unmarshal(it, &m) == nil && m.Type == "message" && m.Role == "developer" && len(m.Content) == 1 {
			out = append(out, m.Content[0].Text)
		}
	}
	return out
}

// agentsTree is a repository with AGENTS.md files at its root and on the
// way down to sub/dir, where an override replaces the AGENTS.md, and a
// user's own file; it returns the open root.
func agentsTree(t *testing.T) *workspace.Root {
	t.Helper()
	base, _ := filepath.EvalSymlinks(t.TempDir())
	repo := filepath.Join(base, "repo")
	files := map[string]string{
		"AGENTS.md":                  "root rules: run make test\n",
		"sub/AGENTS.md":              "sub rules\n",
		"sub/dir/AGENTS.md":          "shadowed rules\n",
		"sub/dir/AGENTS.override.md": "override rules\n",
		"elsewhere/AGENTS.md":        "not on the way\n",
		"../config/hearth/AGENTS.md": "the user's rules\n",
		"../outside/AGENTS.md":       "outside rules\n",
	}
	for p, text := range files {
		full := filepath.Join(repo, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(text), 0o644)
	}
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(base, "config"))
	r, err := workspace.Open(repo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// The user's file first, then the repository's from its root down to the
// working directory, each headed by its path; an override wins in its
// directory; files elsewhere are left to the model, which is told of them.
func TestAgentsFromRootDown(t *testing.T) {
	r := agentsTree(t)
	items := agentsContext(r, filepath.Join("sub", "dir"))
	texts := developerTexts(items)
	if len(items) != 1 || len(texts) != 1 {
		t.Fatalf("want one developer message, got %d items", len(items))
	}
	text := texts[0]
	var at []int
	for _, want := range []string{"the user's rules", "root rules", "sub rules", "override rules"} {
		at = append(at, strings.Index(text, want))
	}
	if slices.Contains(at, -1) || !slices.IsSorted(at) {
		t.Errorf("files missing or out of order (%v):\n%s", at, text)
	}
	for _, not := range []string{"shadowed rules", "not on the way", "outside rules"} {
		if strings.Contains(text, not) {
			t.Errorf("the message holds %q:\n%s", not, text)
		}
	}
	for _, want := range []string{
		"==> " + filepath.Join(r.Path(), "AGENTS.md") + " (the repository root",
		"==> " + filepath.Join(r.Path(), "sub", "dir", "AGENTS.override.md") + " (applies to " + filepath.Join(r.Path(), "sub", "dir") + " and below)",
		"AGENTS.md files in other directories apply to the files under them",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the message lacks %q:\n%s", want, text)
		}
	}
	// At the root, only the root's (and the user's).
	text = developerTexts(agentsContext(r, ""))[0]
	if !strings.Contains(text, "root rules") || strings.Contains(text, "sub rules") {
		t.Errorf("at the root:\n%s", text)
	}
}

// A symlinked AGENTS.md that leads out of the workspace is not read: the
// files inside the root are read through its handle.
func TestAgentsConfined(t *testing.T) {
	r := agentsTree(t)
	os.Remove(filepath.Join(r.Path(), "sub", "AGENTS.md"))
	if err := os.Symlink(filepath.Join(r.Path(), "..", "outside", "AGENTS.md"), filepath.Join(r.Path(), "sub", "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	if text := developerTexts(agentsContext(r, "sub"))[0]; strings.Contains(text, "outside rules") {
		t.Errorf("a link out of the workspace was read:\n%s", text)
	}
}

// Past 32 KiB in all, each file keeps a fair share — a long root file does
// not crowd out the working directory's — and is cut at a line end with a
// note saying where the rest is.
func TestAgentsLimit(t *testing.T) {
	r := agentsTree(t)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no user file
	long := strings.Repeat("a line of the root's long rules\n", 2000)
	os.WriteFile(filepath.Join(r.Path(), "AGENTS.md"), []byte(long), 0o644)
	text := developerTexts(agentsContext(r, filepath.Join("sub", "dir")))[0]
	if !strings.Contains(text, "override rules") || !strings.Contains(text, "sub rules") {
		t.Errorf("the deeper files were crowded out")
	}
	note := "[cut: this file is 64000 bytes and hearth gives the AGENTS.md files 32 KiB in all; read the rest with read_file]"
	if !strings.Contains(text, "rules\n"+note) {
		t.Errorf("no note after a cut at a line end")
	}
	if n := strings.Count(text, "a line of"); n*32 > agentsLimit || n*32 < agentsLimit-200 {
		t.Errorf("%d lines of the root's file kept", n)
	}
	if got := agentsShares([]int{40000, 100, 50}, agentsLimit); got[0] != agentsLimit-150 || got[1] != 100 || got[2] != 50 {
		t.Errorf("shares %v", got)
	}
	if got := agentsShares([]int{40000, 40000}, agentsLimit); got[0] != agentsLimit/2 || got[1] != agentsLimit/2 {
		t.Errorf("shares %v", got)
	}
	if got := cutText([]byte("ab\xc3\xa9"), 3); string(got) != "ab" {
		t.Errorf("a character cut in two: %q", got)
	}
}

// A session opened in a subdirectory of a repository begins with both
// AGENTS.md files, root first: its warm-up carries them.
func TestSessionBeginsWithAgentsChain(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	os.Mkdir(filepath.Join(td.root, ".git"), 0o755)
	os.WriteFile(filepath.Join(td.root, "AGENTS.md"), []byte("root: use tabs\n"), 0o644)
	os.WriteFile(filepath.Join(td.root, "src", "AGENTS.md"), []byte("src: no globals\n"), 0o644)
	ed := td.connect()
	ed.initialize()
	ed.newSession(filepath.Join(td.root, "src"))
	warm := td.waitRequests(1)[0]
	texts := developerTexts(warm.Input)
	if len(texts) != 2 {
		t.Fatalf("the warm-up has %d developer messages, want the environment and the AGENTS.md files", len(texts))
	}
	i, j := strings.Index(texts[1], "root: use tabs"), strings.Index(texts[1], "src: no globals")
	if i < 0 || j < i {
		t.Errorf("the AGENTS.md files, root first:\n%s", texts[1])
	}
}
