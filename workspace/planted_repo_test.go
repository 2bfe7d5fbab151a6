package workspace

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// plantedTree is a workspace that is itself a git repository whose own
// configuration runs code (the user's: left alone), holding a nested
// repository the user cloned before hearth's first command, with a hook
// (the user's too), and a plain nested one.
func plantedTree(t *testing.T) (ts *Toolset, dir string) {
	t.Helper()
	r, dir := gitRepoTree(t)
	writeFile(t, filepath.Join(dir, ".git", "config"), "[core]\n\tfsmonitor = .git/own-fsmonitor\n")
	writeExec(t, filepath.Join(dir, ".git", "hooks", "pre-commit"))
	writeFile(t, filepath.Join(dir, "vendor", "lib", ".git", "config"), "[core]\n\thooksPath = .husky\n")
	writeExec(t, filepath.Join(dir, "vendor", "lib", ".git", "hooks", "pre-push"))
	writeFile(t, filepath.Join(dir, "clean", ".git", "config"), "[core]\n\tbare = false\n")
	writeFile(t, filepath.Join(dir, "tools", ".git", "config"), "[core]\n\tbare = false\n")
	writeFile(t, filepath.Join(dir, "src", "a", "b", "main.go"), "package b\n")
	return NewToolset(r), dir
}

func writeExec(t *testing.T, path string) {
	t.Helper()
	writeFile(t, path, "#!/bin/sh\ntouch \"$(dirname \"$0\")/RAN\"\n")
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// assertDisarmed fails unless res names repo (relative, e.g. "sub/.git")
// as disarmed and git would no longer read what was planted: its config
// (if planted there) holds none of bad, the original is kept beside it.
func assertDisarmed(t *testing.T, what string, res Result, dir, repo, bad string) {
	t.Helper()
	if !strings.Contains(res.Output, "[hearth disarmed "+repo+":") {
		t.Errorf("%s: the result does not say %s was disarmed: %s", what, repo, res.Output)
	}
	if bad == "" {
		return
	}
	cfg, err := os.ReadFile(filepath.Join(dir, repo, "config"))
	if err != nil {
		t.Errorf("%s: %s/config: %v", what, repo, err)
	}
	if strings.Contains(strings.ToLower(string(cfg)), strings.ToLower(bad)) {
		t.Errorf("%s: %s/config still holds %q:\n%s", what, repo, bad, cfg)
	}
	kept, err := os.ReadFile(filepath.Join(dir, repo, "config.hearth-disarmed"))
	if err != nil || !strings.Contains(strings.ToLower(string(kept)), strings.ToLower(bad)) {
		t.Errorf("%s: the original config was not kept as %s/config.hearth-disarmed: %q, %v", what, repo, kept, err)
	}
}

// TestPlantedRepoConfigDisarmed: after a shell command plants a
// repository whose configuration runs a program (each kind of key git
// runs, and an include that could pull one in), hearth moves that
// configuration aside and says so in the result, leaving the model's
// other files alone.
func TestPlantedRepoConfigDisarmed(t *testing.T) {
	ts, dir := plantedTree(t)
	cases := map[string]string{
		"core.fsmonitor":             "[core]\n\tfsmonitor = touch PWNED\n",
		"core.hooksPath":             "[core]\n\thooksPath = evil-hooks\n",
		"core.sshCommand":            "[core]\n\tsshCommand = sh -c evil\n",
		"core.editor":                "[core]\n\teditor = evil\n",
		"core.pager":                 "[CORE]\n\tPAGER = evil\n",
		"core.askPass":               "[core]\n\taskPass = evil\n",
		"core.gitProxy":              "[core]\n\tgitProxy = evil\n",
		"sequence.editor":            "[sequence]\n\teditor = evil\n",
		"diff.external":              "[diff]\n\texternal = evil\n",
		"diff.x.textconv":            "[diff \"x\"]\n\ttextconv = evil\n",
		"diff.x.command":             "[diff \"x\"]\n\tcommand = evil\n",
		"filter.x.clean":             "[filter \"x\"]\n\tclean = evil\n",
		"filter.x.smudge":            "[filter \"x\"]\n\tsmudge = evil\n",
		"filter.x.process":           "[filter \"x\"]\n\tprocess = evil\n",
		"merge.x.driver":             "[merge \"x\"]\n\tdriver = evil\n",
		"credential.helper":          "[credential]\n\thelper = evil\n",
		"gpg.program":                "[gpg]\n\tprogram = evil\n",
		"gpg.ssh.program":            "[gpg \"ssh\"]\n\tprogram = evil\n",
		"pager.log":                  "[pager]\n\tlog = evil\n",
		"alias !":                    "[alias]\n\tst = !evil\n",
		"uploadpack.packObjectsHook": "[uploadpack]\n\tpackObjectsHook = evil\n",
		"include.path":               "[include]\n\tpath = ../../inc.cfg\n",
		"includeIf":                  "[includeIf \"gitdir:/\"]\n\tpath = ../../inc.cfg\n",
		"continuation":               "[core]\n\tfsmonitor = touch \\\n PWNED\n",
		"after a harmless section":   "[user]\n\tname = x\n[core]\n\tbare = false\n\tfsmonitor = evil\n",
		"unparsable (refused whole)": "[core\n\tfsmonitor = evil\n",
		"config.worktree":            "",
	}
	i := 0
	for name, cfg := range cases {
		i++
		repo := filepath.Join("p", strings.Repeat("d/", i%4), "r"+strings.ReplaceAll(name, " ", "_"), ".git")
		var cmd string
		bad := "evil"
		switch name {
		case "config.worktree":
			cmd = "mkdir -p '" + repo + "' && printf '[extensions]\\n\\tworktreeConfig = true\\n' > '" + repo + "/config' && printf '[core]\\n\\tfsmonitor = evil\\n' > '" + repo + "/config.worktree'"
			bad = ""
		default:
			if strings.Contains(cfg, "PWNED") {
				bad = "PWNED"
			}
			if strings.Contains(cfg, "inc.cfg") {
				bad = "inc.cfg"
			}
			if name == "unparsable (refused whole)" {
				bad = "fsmonitor"
			}
			src := filepath.Join(t.TempDir(), "config")
			if err := os.WriteFile(src, []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd = "mkdir -p '" + repo + "' && cp " + src + " '" + repo + "/config'"
		}
		res := runShell(t, ts, cmd, 0)
		if !strings.HasPrefix(res.Output, "Exit code: 0\n") {
			t.Fatalf("%s: %s", name, res.Output)
		}
		assertDisarmed(t, name, res, dir, filepath.ToSlash(repo), bad)
		if name == "config.worktree" {
			if _, err := os.Stat(filepath.Join(dir, repo, "config.worktree")); err == nil {
				t.Errorf("config.worktree: still there for git to read")
			}
		}
	}

	// Harmless configurations stay as they are.
	for name, cfg := range map[string]string{
		"fresh":         "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n",
		"plain alias":   "[alias]\n\tst = status\n",
		"clone remotes": "[remote \"origin\"]\n\turl = https://example.com/x.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n",
	} {
		repo := filepath.Join("ok", strings.ReplaceAll(name, " ", "_"), ".git")
		src := filepath.Join(t.TempDir(), "config")
		if err := os.WriteFile(src, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		res := runShell(t, ts, "mkdir -p '"+repo+"' && cp "+src+" '"+repo+"/config'", 0)
		if strings.Contains(res.Output, "hearth disarmed") {
			t.Errorf("%s: disarmed a harmless configuration: %s", name, res.Output)
		}
		if b, err := os.ReadFile(filepath.Join(dir, repo, "config")); err != nil || string(b) != cfg {
			t.Errorf("%s: config is now %q (%v)", name, b, err)
		}
	}
	assertUsersReposKept(t, dir)
}

// assertUsersReposKept fails unless the repositories plantedTree made
// before hearth's first command are as they were.
func assertUsersReposKept(t *testing.T, dir string) {
	t.Helper()
	for path, want := range map[string]string{
		".git/config":            "[core]\n\tfsmonitor = .git/own-fsmonitor\n",
		"vendor/lib/.git/config": "[core]\n\thooksPath = .husky\n",
		"clean/.git/config":      "[core]\n\tbare = false\n",
	} {
		if b, err := os.ReadFile(filepath.Join(dir, path)); err != nil || string(b) != want {
			t.Errorf("the user's %s is now %q (%v)", path, b, err)
		}
	}
	for _, hook := range []string{".git/hooks/pre-commit", "vendor/lib/.git/hooks/pre-push"} {
		if fi, err := os.Stat(filepath.Join(dir, hook)); err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("the user's hook %s: %v", hook, err)
		}
	}
}

// TestPlantedRepoWays: the ways a command can plant or arm a repository
// are all caught: real git init and git config (after which git runs
// nothing), a hook, a tree made in the temp dir and moved in, a change
// to a repository that was harmless, a .git file pointing git elsewhere;
// a disarmed repository armed again keeps both originals; a command that
// plants nothing reports nothing.
func TestPlantedRepoWays(t *testing.T) {
	ts, dir := plantedTree(t)
	plantedWays(t, ts, dir)
}

// plantedWays runs TestPlantedRepoWays's commands in ts, a plantedTree
// at dir.
func plantedWays(t *testing.T, ts *Toolset, dir string) {
	t.Helper()
	tmp := t.TempDir()
	pwned := filepath.Join(tmp, "PWNED")

	res := runShell(t, ts, "git init -q sub && git -C sub config core.fsmonitor 'touch "+pwned+"'", 0)
	assertDisarmed(t, "git init + git config", res, dir, "sub/.git", pwned)
	if !strings.Contains(res.Output, "core.fsmonitor") {
		t.Errorf("the note does not say why: %s", res.Output)
	}
	if out, err := exec.Command("git", "-C", filepath.Join(dir, "sub"), "status").CombinedOutput(); err != nil {
		t.Errorf("git status in the disarmed repository: %v\n%s", err, out)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Error("git status ran the planted fsmonitor")
	}

	res = runShell(t, ts, "mkdir -p src/a/b/h/.git/hooks && printf '#!/bin/sh\\n' > src/a/b/h/.git/hooks/post-checkout && chmod +x src/a/b/h/.git/hooks/post-checkout && printf '#!/bin/sh\\n' > src/a/b/h/.git/hooks/pre-push.sample && chmod +x src/a/b/h/.git/hooks/pre-push.sample", 0)
	assertDisarmed(t, "a hook", res, dir, "src/a/b/h/.git", "")
	if _, err := os.Stat(filepath.Join(dir, "src/a/b/h/.git/hooks.hearth-disarmed/post-checkout")); err != nil {
		t.Errorf("the hook was not kept in hooks.hearth-disarmed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "src/a/b/h/.git/hooks/post-checkout")); err == nil {
		t.Error("the hook is still where git runs it")
	}
	res = runShell(t, ts, "mkdir -p s/.git/hooks && printf '#!/bin/sh\\n' > s/.git/hooks/pre-commit.sample && chmod +x s/.git/hooks/pre-commit.sample", 0)
	if strings.Contains(res.Output, "hearth disarmed") {
		t.Errorf("an executable .sample hook (git never runs it) was disarmed: %s", res.Output)
	}

	mkdir(t, filepath.Join(tmp, "made", "deep", "er", ".git"))
	writeFile(t, filepath.Join(tmp, "made", "deep", "er", ".git", "config"), "[alias]\n\tx = !evil\n")
	res = runShell(t, ts, "mv "+filepath.Join(tmp, "made")+" src/a/moved", 0)
	assertDisarmed(t, "a tree moved in", res, dir, "src/a/moved/deep/er/.git", "evil")

	res = runShell(t, ts, "printf '[core]\\n\\tpager = evil\\n' >> tools/.git/config", 0)
	assertDisarmed(t, "a harmless repository armed", res, dir, "tools/.git", "evil")

	res = runShell(t, ts, "mkdir -p g m && echo 'gitdir: "+tmp+"' > g/.git && echo 'gitdir: ../.git/modules/m' > m/.git", 0)
	if !strings.Contains(res.Output, "[hearth disarmed g/.git:") {
		t.Errorf("a .git file pointing outside: %s", res.Output)
	}
	if _, err := os.Stat(filepath.Join(dir, "g", ".git")); err == nil {
		t.Error("g/.git is still there for git to follow")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "g", ".git.hearth-disarmed")); err != nil || !strings.Contains(string(b), tmp) {
		t.Errorf("g/.git was not kept as g/.git.hearth-disarmed: %q, %v", b, err)
	}
	if strings.Contains(res.Output, "m/.git") {
		t.Errorf("a submodule's .git file (into the workspace's own .git/modules) was disarmed: %s", res.Output)
	}

	res = runShell(t, ts, "mkdir -p l k && ln -s "+tmp+" l/.git && ln -s ../.git k/.git", 0)
	if !strings.Contains(res.Output, "[hearth disarmed l/.git:") || strings.Contains(res.Output, "k/.git") {
		t.Errorf("a .git symlink out of the workspace is disarmed, one to its own repository kept: %s", res.Output)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "l", ".git.hearth-disarmed")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("l/.git was not kept as the link l/.git.hearth-disarmed: %v", err)
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Errorf("the link's target was touched: %v", err)
	}

	// What the user does between commands is theirs: a hook added to a
	// known repository stays when the next command does not touch it.
	writeExec(t, filepath.Join(dir, "vendor", "lib", ".git", "hooks", "post-merge"))
	res = runShell(t, ts, "true", 0)
	if strings.Contains(res.Output, "hearth disarmed") {
		t.Errorf("the user's new hook was disarmed: %s", res.Output)
	}
	if _, err := os.Stat(filepath.Join(dir, "vendor", "lib", ".git", "hooks", "post-merge")); err != nil {
		t.Errorf("the user's new hook: %v", err)
	}
	// But a command's change to that repository is the command's.
	res = runShell(t, ts, "echo 'touch "+pwned+"' >> vendor/lib/.git/hooks/post-merge", 0)
	assertDisarmed(t, "a command changing a known hook", res, dir, "vendor/lib/.git", "")
	writeFile(t, filepath.Join(dir, "vendor", "lib", ".git", "config"), "[core]\n\thooksPath = .husky\n")
	writeExec(t, filepath.Join(dir, "vendor", "lib", ".git", "hooks", "pre-push"))

	res = runShell(t, ts, "git -C sub config core.fsmonitor 'touch "+pwned+"'", 0)
	assertDisarmed(t, "armed again", res, dir, "sub/.git", "")
	for _, kept := range []string{"config.hearth-disarmed", "config.hearth-disarmed.2"} {
		if b, err := os.ReadFile(filepath.Join(dir, "sub/.git", kept)); err != nil || !strings.Contains(string(b), pwned) {
			t.Errorf("sub/.git/%s: %q, %v", kept, b, err)
		}
	}

	res = runShell(t, ts, "echo hello > notes.txt && mkdir -p more/dirs", 0)
	if strings.Contains(res.Output, "hearth disarmed") || !strings.HasSuffix(res.Output, "Output:\n") {
		t.Errorf("a command that planted nothing: %s", res.Output)
	}
	assertUsersReposKept(t, dir)
}

// TestPlantedRepoSandboxed: the same holds for a command run in the
// sandbox.
func TestPlantedRepoSandboxed(t *testing.T) {
	ts, dir := plantedTree(t)
	useSandbox(t)
	res := runShell(t, ts, "mkdir -p x/.git && printf '[core]\\n\\tfsmonitor = evil\\n' > x/.git/config", 0)
	assertDisarmed(t, "sandboxed", res, dir, "x/.git", "evil")
}

// TestPlantedRepoOwnPointer: in a workspace that is a worktree (its .git
// a file naming the main repository's worktrees/NAME), a command that
// rewrites that file to lead git elsewhere has it moved aside; left as it
// is, it is the workspace's own and untouched.
func TestPlantedRepoOwnPointer(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(base, "main", ".git", "worktrees", "wt")
	writeFile(t, filepath.Join(wt, "commondir"), "../..\n")
	writeFile(t, filepath.Join(base, "main", ".git", "config"), "[core]\n\tfsmonitor = the-users-own\n")
	dir := filepath.Join(base, "ws")
	writeFile(t, filepath.Join(dir, ".git"), "gitdir: "+wt+"\n")
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	ts := NewToolset(r)
	if res := runShell(t, ts, "echo hi > a.txt", 0); strings.Contains(res.Output, "hearth disarmed") {
		t.Errorf("the workspace's own .git file was disarmed: %s", res.Output)
	}
	evil := filepath.Join(base, "evil")
	writeFile(t, filepath.Join(evil, "config"), "[core]\n\tfsmonitor = evil\n")
	res := runShell(t, ts, "echo 'gitdir: "+evil+"' > .git", 0)
	if !strings.Contains(res.Output, "[hearth disarmed .git:") {
		t.Errorf("a rewritten own .git file: %s", res.Output)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		t.Error(".git still leads git to the planted configuration")
	}
}

// TestPlantedInOwnGitDir: a command cannot arm the workspace's own git
// directory by adding what its read-only mounts could not cover, because
// it was not there: a commondir (git would read the configuration of the
// directory it names) or a new submodule's or worktree's git directory
// whose configuration runs code. Each is moved aside after the command,
// and the result says so; objects, refs and the index stay the command's.
func TestPlantedInOwnGitDir(t *testing.T) {
	for _, sandboxed := range []bool{false, true} {
		name := map[bool]string{false: "unsandboxed", true: "sandboxed"}[sandboxed]
		t.Run(name, func(t *testing.T) {
			r, dir := gitRepoTree(t)
			if sandboxed {
				useSandbox(t)
			}
			ts := NewToolset(r)
			writeFile(t, filepath.Join(dir, "evil", "config"), "[core]\n\tfsmonitor = touch PWNED\n")
			res := runShell(t, ts, "echo ../evil > .git/commondir", 0)
			if _, err := os.Lstat(filepath.Join(dir, ".git", "commondir")); err == nil {
				t.Errorf("a planted .git/commondir is left: %s", res.Output)
			}
			if !strings.Contains(res.Output, "[hearth disarmed .git/commondir:") {
				t.Errorf("the result does not say .git/commondir was disarmed: %s", res.Output)
			}
			for _, sub := range []string{"modules/x", "worktrees/y"} {
				res = runShell(t, ts, "mkdir -p .git/"+sub+" && printf '[core]\\n\\tfsmonitor = evil\\n' > .git/"+sub+"/config", 0)
				assertDisarmed(t, sub, res, dir, ".git/"+sub, "evil")
			}
			res = runShell(t, ts, "mkdir -p .git/modules/z/hooks && printf '#!/bin/sh\\n' > .git/modules/z/hooks/post-checkout && chmod +x .git/modules/z/hooks/post-checkout", 0)
			if !strings.Contains(res.Output, "[hearth disarmed .git/modules/z:") {
				t.Errorf("a new submodule git directory with a hook: %s", res.Output)
			}
			res = runShell(t, ts, "mkdir -p .git/objects/ab .git/refs/heads && echo x > .git/objects/ab/cd && echo 0 > .git/refs/heads/t && echo i > .git/index", 0)
			if strings.Contains(res.Output, "hearth disarmed") {
				t.Errorf("objects, refs and the index are the command's: %s", res.Output)
			}
		})
	}
}
