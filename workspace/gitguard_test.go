package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepoTree is a workspace that is a git repository: .git/config,
// .git/hooks and .git/info exist, as `git init` leaves them.
func gitRepoTree(t *testing.T) (r *Root, dir string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(base, "ws")
	writeFile(t, filepath.Join(dir, ".git", "config"), "[core]\n\trepositoryformatversion = 0\n")
	writeFile(t, filepath.Join(dir, ".git", "HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(dir, ".git", "info", "exclude"), "# excludes\n")
	mkdir(t, filepath.Join(dir, ".git", "hooks"))
	writeFile(t, filepath.Join(dir, "main.go"), "package main\n")
	r, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, dir
}

// assertRefusedGit fails unless res is an error that says the path is in
// git's directory and that git commands are the way.
func assertRefusedGit(t *testing.T, what string, res Result) {
	t.Helper()
	if !res.IsError || !strings.Contains(res.Output, "refused") || !strings.Contains(res.Output, "git command") {
		t.Errorf("%s: want a refusal naming git commands, got %+v", what, res)
	}
}

// snapshotDir reads every regular file below dir, by relative path, to
// tell that a refused call changed nothing.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func assertUnchanged(t *testing.T, what, dir string, before map[string]string) {
	t.Helper()
	after := snapshotDir(t, dir)
	for p, b := range before {
		if after[p] != b {
			t.Errorf("%s changed %s: %q, was %q", what, p, after[p], b)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s created %s", what, p)
		}
	}
}

// TestFileToolsRefuseGitDir: write_file, edit_file and apply_patch (as a
// tool and through the shell tool) refuse every write, creation, deletion
// and move inside .git — the workspace's own, one planted below it, in any
// letter case, through a symlink, or a .git file of a new repository —
// and change nothing; reading .git stays allowed.
func TestFileToolsRefuseGitDir(t *testing.T) {
	r, dir := gitRepoTree(t)
	symlink(t, ".git", filepath.Join(dir, "gitlink"))
	symlink(t, ".git/hooks", filepath.Join(dir, "hooklink"))
	ts := NewToolset(r)
	before := snapshotDir(t, dir)

	writes := []string{
		".git/config",
		".git/hooks/pre-commit",
		".git/info/attributes",
		".GIT/config",
		".Git/hooks/post-checkout",
		"./sub/../.git/config",
		filepath.Join(dir, ".git", "config"),
		"gitlink/config",
		"hooklink/pre-commit",
		"sub/.git/config",
		"sub/.git",
		"deep/er/.git/hooks/pre-push",
		".git./config",                   // NTFS drops trailing dots
		".git::$INDEX_ALLOCATION/config", // and stream suffixes
		".g\u200cit/config",              // HFS+ ignores the joiner
		"GIT~1/config",                   // NTFS's short name of .git
	}
	for _, p := range writes {
		res := call(t, ts, "write_file", mustJSON(t, map[string]string{"path": p, "content": "[core]\n\tfsmonitor = touch /tmp/PWNED\n"}))
		assertRefusedGit(t, "write_file "+p, res)
	}
	res := call(t, ts, "edit_file", mustJSON(t, map[string]string{"path": ".git/config", "old_string": "repositoryformatversion = 0", "new_string": "fsmonitor = touch /tmp/PWNED"}))
	assertRefusedGit(t, "edit_file .git/config", res)
	res = call(t, ts, "edit_file", mustJSON(t, map[string]string{"path": "gitlink/HEAD", "old_string": "main", "new_string": "evil"}))
	assertRefusedGit(t, "edit_file gitlink/HEAD", res)

	patches := map[string][]string{
		"update":                               {"*** Begin Patch", "*** Update File: .git/config", "@@", "-\trepositoryformatversion = 0", "+\tfsmonitor = touch /tmp/PWNED", "*** End Patch"},
		"add hook, with an allowed file first": {"*** Begin Patch", "*** Add File: ok.txt", "+fine", "*** Add File: .git/hooks/pre-commit", "+#!/bin/sh", "+touch /tmp/PWNED", "*** End Patch"},
		"delete":                               {"*** Begin Patch", "*** Delete File: .git/info/exclude", "*** End Patch"},
		"move out":                             {"*** Begin Patch", "*** Update File: .git/HEAD", "*** Move to: head.txt", "@@", "-ref: refs/heads/main", "+x", "*** End Patch"},
		"move in":                              {"*** Begin Patch", "*** Update File: main.go", "*** Move to: .git/hooks/pre-commit", "@@", "-package main", "+#!/bin/sh", "*** End Patch"},
		"gitdir file":                          {"*** Begin Patch", "*** Add File: vendor/x/.git", "+gitdir: ../../elsewhere", "*** End Patch"},
		"planted repo":                         {"*** Begin Patch", "*** Add File: sub/.git/config", "+[core]", "+\tfsmonitor = touch /tmp/PWNED", "*** End Patch"},
		"through links":                        {"*** Begin Patch", "*** Add File: hooklink/post-merge", "+#!/bin/sh", "*** End Patch"},
	}
	for name, lines := range patches {
		assertRefusedGit(t, "apply_patch "+name, patchCall(t, ts, lines...))
		text := strings.Join(lines, "\n") + "\n"
		assertRefusedGit(t, "shell apply_patch "+name, runShell(t, ts, "apply_patch <<'EOF'\n"+text+"EOF", 0))
		if p, err := ts.Preview(t.Context(), "apply_patch", []byte(mustJSON(t, map[string]string{"input": text}))); err == nil {
			t.Errorf("preview of apply_patch %s: no refusal, %+v", name, p)
		}
	}
	assertUnchanged(t, "the refused calls", dir, before)

	if res := call(t, ts, "read_file", `{"path":".git/config"}`); res.IsError || !strings.Contains(res.Output, "repositoryformatversion") {
		t.Errorf("read_file .git/config: %+v", res)
	}
	// Names that only look like .git are ordinary files.
	for _, p := range []string{".gitignore", "x.git/config", ".github/workflows/ci.yml", "git/config", ".gitx/config", "a.git.b"} {
		if res := call(t, ts, "write_file", mustJSON(t, map[string]string{"path": p, "content": "ok\n"})); res.IsError {
			t.Errorf("write_file %s: %s", p, res.Output)
		}
	}
}

// TestFileToolsRefuseSeparateGitDir: a workspace whose .git is a file
// pointing at a git directory elsewhere in the workspace (git init
// --separate-git-dir), with a commondir (a worktree's), refuses writes
// there too, though no component of the path is named .git.
func TestFileToolsRefuseSeparateGitDir(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "ws")
	writeFile(t, filepath.Join(dir, "store", "main", "config"), "[core]\n")
	writeFile(t, filepath.Join(dir, "store", "main", "worktrees", "wt", "commondir"), "../..\n")
	writeFile(t, filepath.Join(dir, "store", "main", "worktrees", "wt", "HEAD"), "ref: refs/heads/x\n")
	writeFile(t, filepath.Join(dir, ".git"), "gitdir: store/main/worktrees/wt\n")
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	ts := NewToolset(r)
	before := snapshotDir(t, dir)
	for _, p := range []string{"store/main/worktrees/wt/HEAD", "store/main/config", "store/main/hooks/pre-commit"} {
		assertRefusedGit(t, "write_file "+p, call(t, ts, "write_file", mustJSON(t, map[string]string{"path": p, "content": "x\n"})))
	}
	assertUnchanged(t, "the refused calls", dir, before)
	if res := call(t, ts, "write_file", `{"path":"store/notes.txt","content":"ok\n"}`); res.IsError {
		t.Errorf("write_file beside the git dir: %s", res.Output)
	}
}
