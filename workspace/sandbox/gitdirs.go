package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// Where git's own files are: what the file tools refuse to write
// (workspace's gitguard.go), the helper mounts read-only (git_linux.go) and
// the plant guard watches for (planted_repo.go).

// HasGitComponent reports whether a component of path, split by the OS's
// separator, names .git on some file system: in any letter case (a
// case-insensitive one opens .GIT/config as .git/config), with the
// trailing dots and spaces and the :stream suffix NTFS drops, with the
// invisible code points HFS+ ignores (.g\u200cit), or as NTFS's short
// name GIT~1 — the names git itself refuses to check out.
func HasGitComponent(path string) bool {
	for comp := range strings.SplitSeq(filepath.Clean(path), string(filepath.Separator)) {
		if IsGitName(comp) {
			return true
		}
	}
	return false
}

// IsGitName reports whether name is one a file system may take for .git
// (HasGitComponent).
func IsGitName(name string) bool {
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

// GitDirs lists the git directories of the repository holding root, as
// absolute paths with symlinks evaluated: the first .git found walking up
// from root (followed when it is a `gitdir: X` file), and the common
// directory a worktree's commondir names. Nil outside a repository.
func GitDirs(root string) []string {
	dirs, _ := gitDirsFrom(root)
	return dirs
}

// gitDirsFrom is GitDirs, with the first .git found when it is a file.
func gitDirsFrom(root string) (dirs []string, dotgitFile string) {
	for dir := root; ; {
		dotgit := filepath.Join(dir, ".git")
		if fi, err := os.Stat(dotgit); err == nil {
			if fi.IsDir() {
				return gitDirAndCommon(dotgit), ""
			}
			if fi.Mode().IsRegular() {
				dotgitFile = dotgit
			}
			if gd := readGitdirFile(dotgit); gd != "" {
				return gitDirAndCommon(gd), dotgitFile
			}
			return nil, dotgitFile
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, ""
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

// UnderDir reports whether p is dir or below it; both absolute and clean.
func UnderDir(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}
