package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// With the workspace's watcher at hand, the scan after a command need
// not stat every known directory: the watcher's events name every entry
// the command created, removed or renamed in a watched directory, .git
// ones included. The scan then visits the directories those events name
// (an arrived one whole, since entries made in it before its watch gave
// no event), the known repositories (a few stats each: a config or a
// hook written inside a .git gives no event, .git is not watched) and
// the root (its own .git pointer), so it costs what changed, not the
// size of the tree. The full scan stays for the first command and
// whenever the watcher cannot vouch for its events: none, polling,
// watching the tree in part, events lost or dropped (Events.EventPaths
// says so).
//
// The watcher watches no ignored directory (node_modules, build outputs
// a .gitignore names), so nothing inside one raises an event. Each such
// directory the guard knows is walked whole, as the full scan would:
// dependency trees are where a package manager's scripts run and plant
// things, so they must be looked at, and they are the price of the
// choice rather than the whole tree. Falling back to the full scan
// instead would make every command of a project with one node_modules
// pay for the whole tree.

// Events is what the guard needs of the workspace's file watcher
// (workspace/watch's Watcher): its raw event log and the directories it
// ignores.
type Events interface {
	Sync(ctx context.Context) error
	EventMark() uint64
	EventPaths(mark uint64) (paths []string, next uint64, complete bool)
	IgnoredDirs() []string
}

// eventsSync bounds the wait for the watcher to catch up after a command.
const eventsSync = 2 * time.Second

// UseEvents has the guard limit its scans to what ev's events name, once
// the first walk is done. Call it before the first command.
func (g *PlantGuard) UseEvents(ev Events) {
	g.mu.Lock()
	g.events = ev
	g.mu.Unlock()
}

// eventMark is the events' position now (0 without events); g.mu is held.
func (g *PlantGuard) eventMark() uint64 {
	if g.events == nil {
		return 0
	}
	return g.events.EventMark()
}

// changedPaths returns the paths the events named since the last scan,
// and whether they are complete enough to limit this scan to them; it
// moves the mark either way. g.mu is held.
func (g *PlantGuard) changedPaths() ([]string, bool) {
	if g.events == nil {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), eventsSync)
	err := g.events.Sync(ctx)
	cancel()
	paths, next, complete := g.events.EventPaths(g.mark)
	g.mark = next
	return paths, err == nil && complete
}

// scanEvents is the scan of a command limited to the event paths (slash-
// separated, root-relative), as the comment above says.
func (g *PlantGuard) scanEvents(root string, after int64, paths []string) []string {
	g.gen++
	s := &scanRun{g: g, root: root, own: g.own, after: after, disarm: true, now: time.Now().UnixNano(), visited: map[string]bool{}}
	s.walk("", false, false)
	for _, p := range paths {
		rel, arrived := eventDir(filepath.FromSlash(p))
		if arrived {
			if g.dirs[parentRel(rel)] != nil {
				s.walk(rel, false, true)
			}
			rel = parentRel(rel)
		}
		if g.dirs[rel] != nil {
			s.walk(rel, false, false)
		}
	}
	for _, p := range g.events.IgnoredDirs() {
		if rel := filepath.FromSlash(p); g.dirs[rel] != nil {
			s.walk(rel, false, true)
		}
	}
	for rel, r := range g.repos {
		if r.gen == g.gen {
			continue
		}
		if _, err := os.Lstat(filepath.Join(root, rel)); err != nil {
			delete(g.repos, rel)
			continue
		}
		s.repo(rel, false)
	}
	s.auditOwn()
	return s.notes
}

// eventDir is the directory to visit for the event path rel: rel itself,
// arrived, to visit whole when it is one; or, for a path in or naming a
// .git (never entered), the directory holding that .git, to visit alone.
func eventDir(rel string) (dir string, arrived bool) {
	comps := strings.Split(rel, string(filepath.Separator))
	for i, c := range comps {
		if IsGitName(c) {
			return filepath.Join(comps[:i]...), false
		}
	}
	return rel, true
}

// parentRel is rel's directory, "" for the root.
func parentRel(rel string) string {
	if d := filepath.Dir(rel); d != "." {
		return d
	}
	return ""
}

// forgetGone drops, in a scan limited to the events, what the directory
// rel listed before (old) and lists no more (now): the subdirectories'
// subtrees and the repositories. A full scan forgets them by generation.
func (s *scanRun) forgetGone(rel string, old, now *dirState) {
	for _, name := range old.subdirs {
		if !slices.Contains(now.subdirs, name) {
			s.forgetTree(filepath.Join(rel, name))
		}
	}
	for _, name := range old.gits {
		if !slices.Contains(now.gits, name) {
			delete(s.g.repos, filepath.Join(rel, name))
		}
	}
}

// forgetTree drops the known directory rel, all below it and the
// repositories there.
func (s *scanRun) forgetTree(rel string) {
	d := s.g.dirs[rel]
	if d == nil {
		return
	}
	delete(s.g.dirs, rel)
	for _, name := range d.gits {
		delete(s.g.repos, filepath.Join(rel, name))
	}
	for _, name := range d.subdirs {
		s.forgetTree(filepath.Join(rel, name))
	}
}
