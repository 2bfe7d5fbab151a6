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
func developerTexts(items []json.RawMessage) []string { return messageTexts(items, "developer") }

// messageTexts are the texts of the one-text messages of role among items.
func messageTexts(items []json.RawMessage, role string) []string {
	var out []string
	for _, it := range items {
		var m struct {
			Type, Role string
			Content    []struct{ Text string }
		}
		if json.Unmarshal(it, &m) == nil && m.Type == "message" && m.Role == role && len(m.Content) == 1 {
			out = append(out, m.Content[0].Text)
		}
	}
	return out
}

// contextTexts are the texts of hearth's context messages among items, in
// order: the permissions (developer), the AGENTS.md files and the
// environment (user messages in hearth's framings).
func contextTexts(items []json.RawMessage) []string {
	var out []string
	for _, it := range items {
		for _, role := range []string{"developer", "user"} {
			for _, t := range messageTexts([]json.RawMessage{it}, role) {
				if role == "developer" || hearthContext(t) {
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// agentsMessage is the text of the AGENTS.md message among items, or "".
func agentsMessage(items []json.RawMessage) string {
	for _, t := range messageTexts(items, "user") {
		if strings.HasPrefix(t, agentsHeading) {
			return t
		}
	}
	return ""
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
	cwd := filepath.Join(r.Path(), "sub", "dir")
	items := agentsContext(r, filepath.Join("sub", "dir"), cwd)
	text := agentsMessage(items)
	if len(items) != 1 || text == "" {
		t.Fatalf("want one AGENTS.md message, got %d items", len(items))
	}
	// The framing the families learned: heading, then the files inside
	// INSTRUCTIONS.
	if want := "# AGENTS.md instructions for " + cwd + "\n\n<INSTRUCTIONS>\n"; !strings.HasPrefix(text, want) || !strings.HasSuffix(text, "\n</INSTRUCTIONS>") {
		t.Errorf("the message is not framed as %q … </INSTRUCTIONS>:\n%s", want, text)
	}
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
	text = agentsMessage(agentsContext(r, "", r.Path()))
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
	if text := agentsMessage(agentsContext(r, "sub", filepath.Join(r.Path(), "sub"))); strings.Contains(text, "outside rules") {
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
	text := agentsMessage(agentsContext(r, filepath.Join("sub", "dir"), filepath.Join(r.Path(), "sub", "dir")))
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
	texts := contextTexts(warm.Input[1:]) // after the guidance
	if len(texts) != 3 || !strings.HasPrefix(texts[1], agentsHeading+filepath.Join(td.root, "src")+"\n\n<INSTRUCTIONS>\n") {
		t.Fatalf("the warm-up's context: %q; want the permissions, the AGENTS.md files, the environment", texts)
	}
	i, j := strings.Index(texts[1], "root: use tabs"), strings.Index(texts[1], "src: no globals")
	if i < 0 || j < i {
		t.Errorf("the AGENTS.md files, root first:\n%s", texts[1])
	}
}
