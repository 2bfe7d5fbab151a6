package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Git runs what its repository tells it to: hooks, core.fsmonitor,
// core.sshCommand, aliases, filters... A write into a git directory is a
// program the user runs at their next `git status`. So the file tools
// (write_file, edit_file, apply_patch, as a tool or through the shell)
// never write, create, delete or move a file inside one: not in the
// workspace's own git directory (wherever its .git leads), and not in any
// path with a component named .git (a repository planted below the root,
// or a .git file pointing git elsewhere). Reading stays allowed. Repository
// changes go through git itself, whose commands do not write hooks.

// gitWriteRefused is the model's message when abs, a destination Resolve
// gave for the model's path p (symlinks evaluated), must not be written
// because it is inside a git directory; "" when it may be. shown is the
// destination as the model is shown it. Every write path of the file tools
// calls it: loadTarget, for each file a call plans to write or remove, and
// recheckGit just before the write or removal.
func (ts *Toolset) gitWriteRefused(p, abs, shown string) string {
	lexical := filepath.Join(ts.dir, p)
	if filepath.IsAbs(p) {
		lexical = ts.root.name(filepath.Clean(p))
	}
	why := ""
	switch rel := ts.root.name(abs); {
	case isGitName(filepath.Base(lexical)):
		why = "is named .git: git takes it for a repository, or a pointer to one"
	case hasGitComponent(lexical):
		why = "is inside a .git directory, git's own"
	case hasGitComponent(rel):
		why = fmt.Sprintf("leads through a symlink to %s, inside a .git directory", filepath.ToSlash(rel))
	default:
		for _, g := range gitDirs(ts.root.Path()) {
			if underDir(abs, g) {
				why = "is inside the workspace's git directory " + g
				break
			}
		}
	}
	if why == "" {
		return ""
	}
	return fmt.Sprintf("refused: %s %s. hearth's file tools do not write, create, delete or move files there: "+
		"git runs what those files say (hooks, core.fsmonitor and other settings), so a change there is a program the user's next git command would run. "+
		"Nothing was changed. Make repository changes with git commands in the shell tool (git config, git commit, ...), or ask the user to make them",
		shown, why)
}

// recheckGit refuses c, a change planned a moment ago, when its path now
// leads into a git directory: a directory on the way was swapped for a
// symlink since loadTarget looked.
func (ts *Toolset) recheckGit(c *fileChange) error {
	abs, err := ts.root.Resolve(c.rel)
	if err != nil {
		return err
	}
	if msg := ts.In("").gitWriteRefused(filepath.FromSlash(c.rel), abs, c.shown); msg != "" {
		return errors.New(msg)
	}
	return nil
}

// hasGitComponent reports whether a component of path, split by the OS's
// separator, names .git on some file system: in any letter case (a
// case-insensitive one opens .GIT/config as .git/config), with the
// trailing dots and spaces and the :stream suffix NTFS drops, with the
// invisible code points HFS+ ignores (.g\u200cit), or as NTFS's short
// name GIT~1 — the names git itself refuses to check out.
func hasGitComponent(path string) bool {
	for comp := range strings.SplitSeq(filepath.Clean(path), string(filepath.Separator)) {
		if isGitName(comp) {
			return true
		}
	}
	return false
}

// isGitName reports whether name is one a file system may take for .git
// (hasGitComponent).
func isGitName(name string) bool {
	if len(name) < 4 || len(name) > 64 {
		return false
	}
	name, _, _ = strings.Cut(name, ":")
	name = strings.Map(func(r rune) rune {
		if hfsIgnorable(r) {
			return -1
		}
		return r
	}, name)
	name = strings.TrimRight(name, ". ")
	return strings.EqualFold(name, ".git") || strings.EqualFold(name, "git~1")
}

// hfsIgnorable reports whether HFS+ ignores r in file names.
func hfsIgnorable(r rune) bool {
	return (r >= 0x200c && r <= 0x200f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x206a && r <= 0x206f) || r == 0xfeff
}

// gitDirs lists the git directories of the repository holding root, as
// absolute paths with symlinks evaluated: the first .git found walking up
// from root (followed when it is a `gitdir: X` file), and the common
// directory a worktree's commondir names. Nil outside a repository.
func gitDirs(root string) []string {
	for dir := root; ; {
		dotgit := filepath.Join(dir, ".git")
		if fi, err := os.Stat(dotgit); err == nil {
			gd := dotgit
			if !fi.IsDir() {
				if gd = readGitdirFile(dotgit); gd == "" {
					return nil
				}
			}
			return gitDirAndCommon(gd)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil
		}
		dir = parent
	}
}

// readGitdirFile reads a .git file, "gitdir: X", and returns X as an
// absolute, clean path (relative to the file's directory), or "" when it
// is not one.
func readGitdirFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 4096 {
		return ""
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	target, ok := strings.CutPrefix(strings.TrimSpace(string(line)), "gitdir:")
	if target = strings.TrimSpace(target); !ok || target == "" {
		return ""
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(path), target)
	}
	return filepath.Clean(target)
}

// gitDirAndCommon is gd, a git directory, and its common directory when
// its commondir file names one, symlinks evaluated where they exist.
func gitDirAndCommon(gd string) []string {
	dirs := []string{evalOrClean(gd)}
	if b, err := os.ReadFile(filepath.Join(gd, "commondir")); err == nil {
		if c := strings.TrimSpace(string(b)); c != "" {
			if !filepath.IsAbs(c) {
				c = filepath.Join(gd, c)
			}
			dirs = append(dirs, evalOrClean(c))
		}
	}
	return dirs
}

// evalOrClean is p with symlinks evaluated, or just cleaned when that
// fails (a path that does not exist holds nothing to refuse anyway).
func evalOrClean(p string) string {
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return filepath.Clean(p)
}

// underDir reports whether p is dir or below it; both absolute and clean.
func underDir(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}
