package watch

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// maxIgnoreFile bounds what is read of one exclude or config file.
const maxIgnoreFile = 1 << 20

// loadRepoRules finds the repository that holds root (the nearest
// directory at or above it with a .git, as git does) and returns root's
// path components below the repository's top, and the rules git applies
// there from outside root, lowest priority first: the user's global
// excludes file, $GIT_DIR/info/exclude, then the .gitignore files of the
// directories between the top and root, the top's first. Outside a
// repository only the global excludes file applies, relative to root. The
// files are read once, now; their later changes are not seen.
func loadRepoRules(root string) (prefix []string, rules []ignoreRule) {
	top, gitDir := findRepository(root)
	if top != "" && top != root {
		if rel, err := filepath.Rel(top, root); err == nil {
			prefix = strings.Split(filepath.ToSlash(rel), "/")
		}
	}
	common := ""
	if gitDir != "" {
		common = commonGitDir(gitDir)
	}
	if f := globalExcludesFile(common); f != "" {
		rules = append(rules, parseGitignore(readIgnoreFile(f), nil)...)
	}
	if common != "" {
		rules = append(rules, parseGitignore(readIgnoreFile(filepath.Join(common, "info", "exclude")), nil)...)
	}
	for i := range prefix {
		dir := prefix[:i:i]
		f := filepath.Join(append([]string{top}, append(dir, ".gitignore")...)...)
		rules = append(rules, parseGitignore(readIgnoreFile(f), dir)...)
	}
	if dirIgnored(rules, prefix) {
		// The root is in a directory its repository ignores (an output
		// tree, say), yet it is what the user opened: it is watched as if
		// no repository held it.
		prefix, rules = nil, nil
		if f := globalExcludesFile(""); f != "" {
			rules = parseGitignore(readIgnoreFile(f), nil)
		}
	}
	return prefix, rules
}

// dirIgnored reports whether rules ignore the directory path (components
// below the repository's top) or one of its parents.
func dirIgnored(rules []ignoreRule, path []string) bool {
	for k := 1; k <= len(path); k++ {
		for i := len(rules) - 1; i >= 0; i-- {
			if m := rules[i].p.Match(path[:k], true); m != gitignore.NoMatch {
				if m == gitignore.Exclude {
					return true
				}
				break
			}
		}
	}
	return false
}

// findRepository returns the top directory of the repository that holds
// dir and its git directory, or "" for both: a .git directory, or a .git
// file naming the git directory (a worktree's, a submodule's).
func findRepository(dir string) (top, gitDir string) {
	for {
		dotGit := filepath.Join(dir, ".git")
		if fi, err := os.Lstat(dotGit); err == nil {
			switch {
			case fi.IsDir():
				return dir, dotGit
			case fi.Mode().IsRegular():
				if gd := gitDirLine(readIgnoreFile(dotGit)); gd != "" {
					if !filepath.IsAbs(gd) {
						gd = filepath.Join(dir, gd)
					}
					return dir, gd
				}
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ""
		}
		dir = parent
	}
}

// gitDirLine reads a .git file's "gitdir: <path>".
func gitDirLine(data []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "gitdir:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// commonGitDir is where a worktree's git directory keeps what its
// worktrees share (info/exclude, config): the directory its commondir file
// names, or the git directory itself.
func commonGitDir(gitDir string) string {
	c := strings.TrimSpace(string(readIgnoreFile(filepath.Join(gitDir, "commondir"))))
	switch {
	case c == "":
		return gitDir
	case filepath.IsAbs(c):
		return c
	}
	return filepath.Join(gitDir, c)
}

// globalExcludesFile is the user's global excludes file: core.excludesFile
// from git's configuration ($XDG_CONFIG_HOME/git/config, ~/.gitconfig, then
// the repository's config in commonDir, the last that sets it winning),
// else $XDG_CONFIG_HOME/git/ignore, $XDG_CONFIG_HOME defaulting to
// ~/.config. "" when there is no home to look in.
func globalExcludesFile(commonDir string) string {
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	var configs []string
	if xdg != "" {
		configs = append(configs, filepath.Join(xdg, "git", "config"))
	}
	if home != "" {
		configs = append(configs, filepath.Join(home, ".gitconfig"))
	}
	if commonDir != "" {
		configs = append(configs, filepath.Join(commonDir, "config"))
	}
	value := ""
	for _, c := range configs {
		if v := configExcludesFile(c); v != "" {
			value = v
		}
	}
	switch {
	case value == "" && xdg != "":
		return filepath.Join(xdg, "git", "ignore")
	case value == "":
		return ""
	case value == "~" || strings.HasPrefix(value, "~/"):
		if home == "" {
			return ""
		}
		return filepath.Join(home, value[1:])
	}
	return value
}

// configExcludesFile reads core.excludesFile from one git config file.
func configExcludesFile(path string) string {
	data := readIgnoreFile(path)
	if len(data) == 0 {
		return ""
	}
	cfg := gitconfig.New()
	if err := gitconfig.NewDecoder(bytes.NewReader(data)).Decode(cfg); err != nil {
		return ""
	}
	return cfg.Section("core").Option("excludesfile")
}

// readIgnoreFile reads a regular file outside the workspace's handle, at
// most maxIgnoreFile bytes of it; anything else (missing, a FIFO, a
// directory) reads as empty.
func readIgnoreFile(path string) []byte {
	f, err := os.OpenFile(path, os.O_RDONLY|OpenNonblock, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	data, _ := io.ReadAll(io.LimitReader(f, maxIgnoreFile))
	return data
}
