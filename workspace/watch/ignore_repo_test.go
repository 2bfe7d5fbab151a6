package watch

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// kubeTree lays out a repository shaped like kubernetes': build/ is source
// that no rule names, _output/ is what the top .gitignore ignores, vendor/
// is committed with .gitignore files of its own, build/pause has one too,
// and the user's global excludes file and .git/info/exclude add theirs.
func kubeTree(t *testing.T, root string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	writeFile(t, filepath.Join(home, ".gitconfig"), "[user]\n\tname = someone\n[core]\n\texcludesFile = ~/.gitignore_global\n")
	writeFile(t, filepath.Join(home, ".gitignore_global"), "*.orig\n")
	writeFile(t, filepath.Join(root, ".git", "HEAD"), "ref: refs/heads/master\n")
	writeFile(t, filepath.Join(root, ".git", "info", "exclude"), "# local\n/scratch/\n")
	writeFile(t, filepath.Join(root, ".gitignore"), strings.Join([]string{
		"# OSX", "._*", ".DS_Store", "# the result of the go build", "/output*/", "/_output*/", "/_output",
		"# Emacs and vim", "*~", ".\\#*", "[._]*.s[a-w][a-z]", "# Go test binaries", "*.test",
		"/junit*.xml", "/_tmp/", "/_artifacts/", "/www/master/node_modules/", "zz_generated_*_test.go",
		"/bazel-*", "*.pyc", ".make/", "",
	}, "\n"))
	writeFile(t, filepath.Join(root, "build", "pause", ".gitignore"), "/bin\n/.container-*\n/.push-*\n")
	writeFile(t, filepath.Join(root, "build", "pause", "windows", "wincat", "wincat.go"), wincat)
	writeFile(t, filepath.Join(root, "build", "pause", "linux", "pause.c"), "int main(void) { return 0; }\n")
	writeFile(t, filepath.Join(root, "build", "pause", "bin", "pause-linux-amd64"), "ELF")
	writeFile(t, filepath.Join(root, "build", "lib", "release.sh"), "#!/bin/bash\n")
	writeFile(t, filepath.Join(root, "_output", "local", "go", "bin", "kubectl"), "ELF")
	writeFile(t, filepath.Join(root, "vendor", "github.com", "spf13", "cobra", ".gitignore"), "cobra.test\n/bin/\n")
	writeFile(t, filepath.Join(root, "vendor", "github.com", "spf13", "cobra", "command.go"), "package cobra\n")
	writeFile(t, filepath.Join(root, "vendor", "github.com", "spf13", "cobra", "bin", "tool"), "ELF")
	writeFile(t, filepath.Join(root, "pkg", "kubelet", "kubelet.go"), "package kubelet\n")
	writeFile(t, filepath.Join(root, "www", "master", "node_modules", "x", "index.js"), "x\n")
	writeFile(t, filepath.Join(root, "dist", "notes.md"), "not ignored by kubernetes\n")
}

const wincat = `package main

import "os"

func main() {
	os.Exit(0)
}
`

// In a tree shaped like kubernetes', a change to a file the model read
// under build/ reaches the delta as a diff, and what the repository
// ignores — in its .gitignore files at every level, in .git/info/exclude,
// in the user's global excludes file — does not.
func TestWatchRepositoryShapedLikeKubernetes(t *testing.T) {
	r, root, _ := newTree(t)
	kubeTree(t, root)
	w := watchRoot(t, r, Options{})
	read := "build/pause/windows/wincat/wincat.go"
	seen := map[string]Seen{read: {Hash: seenHash([]byte(wincat)), Content: []byte(wincat)}}
	cur := w.Cursor()

	writeFile(t, filepath.Join(root, filepath.FromSlash(read)), strings.Replace(wincat, "os.Exit(0)", "os.Exit(1)", 1))
	for _, p := range []string{
		"build/pause/bin/pause-windows-amd64",       // build/pause/.gitignore
		"_output/local/go/bin/kube-apiserver",       // the top .gitignore
		"_output/local/go/bin/kubectl",              // (modified)
		"pkg/kubelet/kubelet.test",                  // the top .gitignore, below
		"vendor/github.com/spf13/cobra/cobra.test",  // vendor's own .gitignore
		"vendor/github.com/spf13/cobra/bin/tool",    // (modified)
		"www/master/node_modules/y/index.js",        // anchored deep
		"scratch/notes.md",                          // .git/info/exclude
		"pkg/kubelet/kubelet.go.orig",               // the global excludes file
		"pkg/kubelet/zz_generated_deepcopy_test.go", // a glob
		".git/index",                                       // the repository itself
		"pkg/kubelet/.kubelet.go.swp", "pkg/kubelet/a.go~", // editors' droppings
	} {
		writeFile(t, filepath.Join(root, filepath.FromSlash(p)), "ignored\n")
	}
	for _, p := range []string{"build/lib/release.sh", "vendor/github.com/spf13/cobra/command.go", "dist/notes.md", "pkg/kubelet/kubelet.go"} {
		writeFile(t, filepath.Join(root, filepath.FromSlash(p)), "changed\n")
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	d, err := w.Delta(ctx, cur, seen, DeltaCaps{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Updated[read]; !ok || !strings.Contains(d.Text, "-\tos.Exit(0)\n+\tos.Exit(1)") {
		t.Errorf("the change to %s is not diffed in the delta:\n%s", read, d.Text)
	}
	for _, want := range []string{"build/lib/release.sh", "vendor/github.com/spf13/cobra/command.go", "dist/notes.md", "pkg/kubelet/kubelet.go"} {
		if !strings.Contains(d.Text, want) {
			t.Errorf("the delta does not name %s:\n%s", want, d.Text)
		}
	}
	for _, not := range []string{"pause-windows", "_output", ".test", "node_modules", "scratch", ".orig", "zz_generated", ".git/", ".swp", "~"} {
		if strings.Contains(d.Text, not) {
			t.Errorf("the delta names an ignored path (%s):\n%s", not, d.Text)
		}
	}
}

// A workspace below a repository's top obeys the rules above it: the
// .gitignore files between the top and the root, and info/exclude,
// anchored at the top; a worktree's .git file leads to the repository's
// shared info/exclude; without core.excludesFile the global excludes file
// is $XDG_CONFIG_HOME/git/ignore. A root inside a directory the repository
// ignores is watched as if no repository held it.
func TestIgnorerRepositoryAboveRoot(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, xdg := filepath.Join(base, "home"), filepath.Join(base, "xdg")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", xdg)
	writeFile(t, filepath.Join(xdg, "git", "ignore"), "*.bak\n")
	repo := filepath.Join(base, "repo")
	writeFile(t, filepath.Join(repo, ".git", "info", "exclude"), "/staging/src/tmp/\n*.wt\n")
	writeFile(t, filepath.Join(repo, ".gitignore"), "*.gen.go\n/staging/src/local.txt\n/top-only/\n/_output/\n")
	writeFile(t, filepath.Join(repo, "staging", ".gitignore"), "src/cache/\n")
	ws := filepath.Join(repo, "staging", "src")
	mkdir(t, ws)
	out := filepath.Join(repo, "_output", "tree")
	mkdir(t, out)
	// A worktree elsewhere whose git directory lives in repo/.git.
	wt := filepath.Join(base, "wt")
	writeFile(t, filepath.Join(repo, ".git", "worktrees", "wt", "commondir"), "../..\n")
	writeFile(t, filepath.Join(wt, ".git"), "gitdir: "+filepath.Join(repo, ".git", "worktrees", "wt")+"\n")

	for _, tc := range []struct {
		root, path string
		dir, want  bool
		why        string
	}{
		{ws, "a.gen.go", false, true, "the top's .gitignore, unanchored"},
		{ws, "pkg/b.gen.go", false, true, "the top's .gitignore, deeper"},
		{ws, "local.txt", false, true, "the top's .gitignore, anchored at the top"},
		{ws, "top-only", true, false, "anchored at the top, not at the root"},
		{ws, "cache", true, true, "staging/.gitignore, a path below it"},
		{ws, "tmp", true, true, "info/exclude, anchored at the top"},
		{ws, "x.bak", false, true, "$XDG_CONFIG_HOME/git/ignore"},
		{ws, "main.go", false, false, "ordinary"},
		{ws, "build", true, false, "a directory no rule names"},
		{out, "x.go", false, false, "opened inside a directory its repository ignores"},
		{out, "y.gen.go", false, false, "...where the repository's rules do not apply"},
		{out, "x.bak", false, true, "...but the global ones do"},
		{wt, "x.wt", false, true, "the worktree's shared info/exclude"},
		{wt, "x.bak", false, true, "the global excludes file"},
		{wt, "x.go", false, false, "ordinary"},
	} {
		r, err := openDir(tc.root)
		if err != nil {
			t.Fatal(err)
		}
		ig := NewIgnorer(r, DefaultIgnore)
		ig.Load("")
		if got := ig.Ignored(tc.path, tc.dir); got != tc.want {
			t.Errorf("%s: ignored(%q, dir=%v) = %v, want %v (%s)", filepath.Base(tc.root), tc.path, tc.dir, got, tc.want, tc.why)
		}
		r.Close()
	}
}
