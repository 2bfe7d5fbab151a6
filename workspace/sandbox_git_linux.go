package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// gitDirs finds the git directory of the workspace at root: the first .git
// up from root — a directory, or a file "gitdir: X" (a worktree or a
// submodule), listed first itself (where it leads is as much the
// repository's configuration), then X — and, for a worktree, the common
// directory its commondir names. Nil outside a repository.
func gitDirs(root string) []string {
	for d := canonical(root); ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".git")
		fi, err := os.Stat(p)
		if err == nil && fi.IsDir() {
			return []string{p}
		}
		if err == nil && fi.Mode().IsRegular() {
			return append([]string{p}, gitFileDirs(p)...)
		}
		if d == "/" || d == "." {
			return nil
		}
	}
}

// gitFileDirs follows a .git file ("gitdir: X") to X and X's commondir.
func gitFileDirs(file string) []string {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return nil
	}
	dir := strings.TrimSpace(target)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(filepath.Dir(file), dir)
	}
	dir = canonical(dir)
	dirs := []string{dir}
	if c, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(dir, common)
		}
		if common = canonical(common); !slices.Contains(dirs, common) {
			dirs = append(dirs, common)
		}
	}
	return dirs
}
