package sandbox

import (
	"os"
	"path/filepath"
	"slices"
)

// gitMountPaths is what a command's mount namespace protects of the
// workspace at root's repository: its git directories (GitDirs), and,
// where the first .git up from root is a file "gitdir: X" (a worktree or a
// submodule), that file first: where it leads is as much the repository's
// configuration.
func gitMountPaths(root string) []string {
	dirs := GitDirs(canonical(root))
	for d := canonical(root); ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".git")
		if fi, err := os.Stat(p); err == nil {
			if fi.Mode().IsRegular() && !slices.Contains(dirs, p) {
				return append([]string{p}, dirs...)
			}
			return dirs
		}
		if d == "/" || d == "." {
			return dirs
		}
	}
}
