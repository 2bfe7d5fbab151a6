package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The workspace's own git directory is covered by the sandbox's read-only
// mounts (protectGit), but a mount covers only what exists when the call
// starts, and the directory itself must stay writable for the index,
// refs and objects. So a command, sandboxed or not, could still add what
// git reads as configuration: a commondir (git then reads the
// configuration of the directory it names), or a submodule's or
// worktree's git directory under modules/ or worktrees/ with a config or
// hooks of its own. After each command the guard looks at exactly those
// places — a few directory reads, no walk — and disarms what the command
// added or changed there, as it does a planted repository.

// ownState is what the guard knows of the workspace's own git
// directories: the commondir each held at the first walk (its target, ""
// when none), and the stamp of each git directory below their modules/
// and worktrees/. Guarded by PlantGuard.mu.
type ownState struct {
	commondir map[string]string // own git directory → commondir's target at the first walk
	subs      map[string]string // a git directory under modules/ or worktrees/ → repoStamp
}

// ownSubDepth bounds how deep submodules of submodules are followed.
const ownSubDepth = 8

// learnOwn records the own git directories' state at the first walk.
func (g *PlantGuard) learnOwn() {
	g.ownState = ownState{commondir: map[string]string{}, subs: map[string]string{}}
	for _, gd := range g.own {
		g.ownState.commondir[gd] = commondirTarget(gd)
		for _, sub := range ownSubDirs(gd, 0) {
			g.ownState.subs[sub] = repoStamp(sub)
		}
	}
}

// restampOwn takes what changed in the known git directories below the
// own ones since the last command as the user's.
func (g *PlantGuard) restampOwn() {
	for sub := range g.ownState.subs {
		g.ownState.subs[sub] = repoStamp(sub)
	}
}

// auditOwn disarms what a command added to the own git directories.
func (s *scanRun) auditOwn() {
	st := &s.g.ownState
	for _, gd := range s.own {
		if target := commondirTarget(gd); target != "" && target != st.commondir[gd] && !s.isOwn(target) {
			p := filepath.Join(gd, "commondir")
			to, err := moveAside(p)
			if err != nil {
				s.notes = append(s.notes, fmt.Sprintf("[hearth could not disarm %s: %v; do not run git here, and tell the user]", s.shown(p), err))
				continue
			}
			s.notes = append(s.notes, fmt.Sprintf("[hearth disarmed %s: it pointed git at the configuration in %s, which is not this repository's; it is now %s]",
				s.shown(p), target, s.shown(to)))
		}
		for _, sub := range ownSubDirs(gd, 0) {
			key := repoStamp(sub)
			if old, known := st.subs[sub]; known && old == key {
				continue
			}
			st.subs[sub] = key
			note, err := s.disarmRepo(s.shown(sub), sub)
			switch {
			case err != nil:
				s.notes = append(s.notes, fmt.Sprintf("[hearth could not disarm %s: %v; do not run git here, and tell the user]", s.shown(sub), err))
			case note != "":
				s.notes = append(s.notes, note)
				st.subs[sub] = repoStamp(sub)
			}
		}
	}
	for sub := range st.subs {
		if _, err := os.Lstat(sub); err != nil {
			delete(st.subs, sub)
		}
	}
}

// isOwn reports whether the directory p is one of the workspace's own git
// directories.
func (s *scanRun) isOwn(p string) bool {
	for _, own := range s.own {
		if p == own {
			return true
		}
	}
	return false
}

// shown is p as the model sees it: relative to the workspace's root when
// under it, with slashes.
func (s *scanRun) shown(p string) string {
	if rel, err := filepath.Rel(s.root, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return p
}

// commondirTarget is where the commondir of the git directory gd leads
// (absolute, symlinks evaluated), or "" when it has none.
func commondirTarget(gd string) string {
	b, err := os.ReadFile(filepath.Join(gd, "commondir"))
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(b))
	if c == "" {
		return ""
	}
	if !filepath.IsAbs(c) {
		c = filepath.Join(gd, c)
	}
	return evalOrClean(c)
}

// ownSubDirs lists the git directories under gd's modules/ and worktrees/,
// and those of submodules' submodules, to a depth of ownSubDepth.
func ownSubDirs(gd string, depth int) []string {
	var out []string
	for _, kind := range []string{"modules", "worktrees"} {
		entries, err := os.ReadDir(filepath.Join(gd, kind))
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			sub := filepath.Join(gd, kind, e.Name())
			out = append(out, sub)
			if kind == "modules" && depth < ownSubDepth {
				out = append(out, ownSubDirs(sub, depth+1)...)
			}
		}
	}
	return out
}
