package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// Landlock only allows: a rule grants rights on a file or a whole directory
// tree, and the rights of a file are the union of the rules on it and on
// every directory above it. "Read everything except hearth's directories"
// is therefore built as grants that never cover a denied directory:
//
//   - a grant on a path with no denied directory at or below it is one rule;
//   - a grant on a denied directory, or on anything inside one, is dropped;
//   - a grant on an ancestor of a denied directory (/, /home, /home/u, …) is
//     split: the ancestor itself gets no rule, each of its entries is
//     granted by the same three cases. So no new entry can be made directly
//     in a split write grant, but ~/.bashrc and ~/src can be read;
//   - a symlink among the entries of a split directory is granted at its
//     target when the target neither is, nor is inside, nor holds a denied
//     directory, and skipped otherwise (a rule follows the link).
//
// The read grant is on /; write grants are on the workspace and the temp dir.
// Listing directories (READ_DIR) is granted on all of / apart from these
// splits, so ls ~ works and a denied directory's file names show; their
// contents do not.
// Entries made after the rules are built (a new file in ~) get no rule of
// their own, but each command builds its rules afresh. Hard links and bind
// mounts are other names for the same inodes: a denied file hard-linked
// outside the denied directory stays readable there.

// grantRule is one path to grant rights on and whether it is a directory
// (directory rights can only be given on directories).
type grantRule struct {
	path string
	dir  bool
}

// within reports whether path is dir or below it; both clean and absolute.
func within(path, dir string) bool {
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+"/")
}

// canonical returns the absolute, clean path p with symlinks evaluated,
// or, when it does not resolve (not there yet), just absolute and clean.
func canonical(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	return abs
}

// expandGrant appends to rules the grants of path that cover no directory
// in deny (canonical paths), splitting path per the rules above.
func expandGrant(path string, deny []string, rules []grantRule) []grantRule {
	split := false
	for _, d := range deny {
		if within(path, d) {
			return rules // denied, or inside a denied directory
		}
		if within(d, path) {
			split = true
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return rules // gone: nothing to grant
	}
	if !split {
		return append(rules, grantRule{path, fi.IsDir()})
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return rules // an ancestor we cannot list: its entries stay closed
	}
	for _, e := range entries {
		child := filepath.Join(path, e.Name())
		if e.Type()&os.ModeSymlink == 0 {
			rules = expandGrant(child, deny, rules)
			continue
		}
		target, err := filepath.EvalSymlinks(child)
		if err != nil {
			continue
		}
		disjoint := true
		for _, d := range deny {
			if within(target, d) || within(d, target) {
				disjoint = false
				break
			}
		}
		if disjoint {
			rules = expandGrant(target, deny, rules)
		}
	}
	return rules
}
