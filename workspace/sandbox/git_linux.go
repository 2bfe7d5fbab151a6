package sandbox

import (
	"slices"
)

// gitMountPaths is what a command's mount namespace protects of the
// workspace at root's repository: its git directories (GitDirs), and,
// where the first .git up from root is a file "gitdir: X" (a worktree or a
// submodule), that file first: where it leads is as much the repository's
// configuration.
func gitMountPaths(root string) []string {
	dirs, file := gitDirsFrom(canonical(root))
	if file != "" && !slices.Contains(dirs, file) {
		return append([]string{file}, dirs...)
	}
	return dirs
}
