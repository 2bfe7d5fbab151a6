package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// A command can plant a repository whose configuration runs code: `git
// init sub && git -C sub config core.fsmonitor 'touch /tmp/PWNED'`, a
// hook, a tree with a .git made in the temp dir and moved in, a .git file
// pointing git at a directory elsewhere. The user's editor opens nested
// repositories by itself and runs git there, so the code runs as the
// user, outside any sandbox. After every shell command hearth finds what
// the command planted or armed inside the workspace (not the workspace's
// own repository, whose protection is the sandbox's) and disarms it
// without deleting anything: the configuration is moved aside to
// config.hearth-disarmed and replaced by a minimal one, the hooks
// directory to hooks.hearth-disarmed, a .git file or link to
// .git.hearth-disarmed. The result the model sees says so.
//
// Finding it is as cheap as a complete search can be without a kernel
// watch on every directory: hearth keeps, from one walk before the first
// command, every directory's stamp (inode, mtime, ctime) and its
// subdirectories, and every nested repository's. After a command it
// stats each known directory (in parallel: the scan is its Lstats) and
// reads again only those whose stamp changed — a new entry changes its
// directory's mtime, wherever it is — and walks new directories whole;
// with the workspace's watcher, only the directories its events name
// (planted_events.go). It never descends into a .git. Only what the command did is disarmed: a
// new entry counts when its directory's timestamps are from the command's
// run (a directory moved in whole carries its ctime); a known repository
// is stamped again before each command (what the user changed between
// commands is theirs), so any change to it after is the command's. The
// repositories there before the first command are left alone unless a
// command changes them.

// plantSlack is how far before a command's start a timestamp still counts
// as the command's: file timestamps come from the kernel's coarse clock,
// which lags the one time.Now reads by up to a tick.
const plantSlack = 100 * time.Millisecond

// PlantGuard tracks the directories and nested repositories of one
// workspace between shell commands. One per Toolset, shared by its copies.
type PlantGuard struct {
	mu       sync.Mutex
	ready    bool                  // the first walk is done
	own      []string              // the workspace's own git directories at the first walk (GitDirs)
	rootGit  bool                  // the root held a .git at the first walk: the workspace's own
	dirs     map[string]*dirState  // directory (root-relative, OS separators; "" the root) → what was seen
	repos    map[string]*repoState // nested .git (root-relative) → what git reads there
	gen      uint64                // the number of the scan running or last run
	active   int                   // commands running
	since    time.Time             // the start of the earliest command running
	ownState                       // the own git directories' commondir and sub-repositories (planted_own.go)
	events   Events                // the watcher's events (planted_events.go); nil: every scan is full
	mark     uint64                // the events' position at the last scan
}

// dirState is one directory as the last walk saw it.
type dirState struct {
	gen     uint64 // the scan that last saw it; one that did not is forgotten
	stamp   stamp
	subdirs []string // names of its subdirectories, .git ones left out
	gits    []string // names of its entries named .git (IsGitName)
}

// repoState is one nested .git as the last scan saw it.
type repoState struct {
	gen uint64 // the scan that last saw it
	key string // repoStamp
}

// stamp is what tells that a file or directory changed: a new inode, or
// a new mtime or ctime.
type stamp struct {
	ino          uint64
	mtime, ctime int64
	size         int64
	mode         fs.FileMode
}

func stampOf(fi fs.FileInfo) stamp {
	return stamp{ino: fileID(fi), mtime: fi.ModTime().UnixNano(), ctime: changeTime(fi), size: fi.Size(), mode: fi.Mode()}
}

// since reports whether st changed at or after t (nanoseconds).
func (st stamp) since(t int64) bool { return st.mtime >= t || st.ctime >= t }

func NewPlantGuard() *PlantGuard {
	return &PlantGuard{dirs: map[string]*dirState{}, repos: map[string]*repoState{}}
}

// Begin is called before a command runs in the workspace at root; the
// function it returns, after the command, disarms what the command
// planted and returns a note per repository disarmed, for the model. The
// first Begin walks the whole tree. untouched says the sandbox saw the
// command change no file (Outcome.Untouched): with no other command
// running, there is nothing to look at, and the events it would have
// read wait for the next scan.
func (g *PlantGuard) Begin(root string) (end func(untouched bool) []string) {
	g.mu.Lock()
	if !g.ready {
		g.own = GitDirs(root)
		_, err := os.Lstat(filepath.Join(root, ".git"))
		g.rootGit = err == nil
		g.mark = g.eventMark()
		g.scan(root, 0, false)
		g.learnOwn()
		g.ready = true
	}
	if g.active == 0 {
		// What changed in the known repositories since the last command
		// is the user's doing: learn it. (Not while another command runs:
		// its changes are its own, for its scan.)
		for rel, r := range g.repos {
			r.key = repoStamp(filepath.Join(root, rel))
		}
		g.restampOwn()
		g.since = time.Now()
	}
	g.active++
	g.mu.Unlock()
	return func(untouched bool) []string {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.active--
		if untouched && g.active == 0 {
			return nil
		}
		after := g.since.Add(-plantSlack).UnixNano()
		if paths, ok := g.changedPaths(); ok {
			return g.scanEvents(root, after, paths)
		}
		return g.scan(root, after, true)
	}
}

// scanRun is one scan: its inputs and the notes it gathers.
type scanRun struct {
	g      *PlantGuard
	root   string
	own    []string              // the workspace's own git directories (GitDirs)
	after  int64                 // changes at or after this time (ns) are the command's
	disarm bool                  // false for the first walk, which only learns
	now    int64                 // when the scan started, to tell stamps too recent to trust
	stats  map[string]statResult // the known directories, stated in parallel before the walk
	notes  []string
	// visited is, in a scan limited to the events (scanEvents), each
	// directory visited and whether whole (true); nil in a full scan.
	visited map[string]bool
}

// statResult is one directory's Lstat.
type statResult struct {
	fi  fs.FileInfo
	err error
}

// scan walks the tree as the package comment says; disarm false only
// records what is there.
func (g *PlantGuard) scan(root string, after int64, disarm bool) []string {
	g.gen++
	s := &scanRun{g: g, root: root, own: g.own, after: after, disarm: disarm, now: time.Now().UnixNano()}
	s.stats = statDirs(root, g.dirs)
	s.walk("", false, true)
	if disarm {
		s.auditOwn()
	}
	// Forget what is gone (removed, or below a directory removed).
	for rel, d := range g.dirs {
		if d.gen != g.gen {
			delete(g.dirs, rel)
		}
	}
	for rel, r := range g.repos {
		if r.gen != g.gen {
			delete(g.repos, rel)
		}
	}
	return s.notes
}

// recent is how close to the scan a timestamp must be not to be trusted
// as final: the directory may change again within the same clock tick,
// leaving its stamp as it was. Such a directory is read again next time.
const recent = int64(plantSlack)

// walk visits the directory rel. fresh says it came into the tree during
// the command (created or moved in), so everything below it is the
// command's. deep visits every known subdirectory too (a full scan, or
// a directory the events say arrived); otherwise only new ones are, whole.
func (s *scanRun) walk(rel string, fresh, deep bool) {
	if s.visited != nil {
		if whole, ok := s.visited[rel]; ok && (whole || !deep) {
			return
		}
		s.visited[rel] = deep
	}
	abs := filepath.Join(s.root, rel)
	r, ok := s.stats[rel]
	if !ok {
		r.fi, r.err = os.Lstat(abs)
	}
	if r.err != nil || !r.fi.IsDir() {
		delete(s.g.dirs, rel)
		return
	}
	st := stampOf(r.fi)
	old := s.g.dirs[rel]
	state := old
	if old == nil || old.stamp != st {
		state = s.read(abs, st)
		if state == nil {
			return
		}
		s.g.dirs[rel] = state
		if s.visited != nil && old != nil {
			s.forgetGone(rel, old, state)
		}
	}
	if old != nil && old.stamp.ino != 0 && old.stamp.ino != st.ino {
		deep = true // replaced: no event told what is below the new one
	}
	state.gen = s.g.gen
	// New entries are the command's when the directory changed during it.
	mine := s.disarm && (fresh || st.since(s.after))
	for _, name := range state.gits {
		isNew := old == nil || !slices.Contains(old.gits, name)
		if rel == "" && name == ".git" && s.g.rootGit {
			if s.disarm && s.ownPointerMoved(filepath.Join(abs, name)) {
				s.repo(name, true) // rewritten while hearth runs: no user has reason to point the workspace at another repository
			}
			continue // the workspace's own repository
		}
		s.repo(filepath.Join(rel, name), isNew && mine)
	}
	for _, name := range state.subdirs {
		isNew := old == nil || !slices.Contains(old.subdirs, name)
		if deep || isNew {
			s.walk(filepath.Join(rel, name), isNew && mine, deep || isNew)
		}
	}
	if st.mtime > s.now-recent || st.ctime > s.now-recent {
		state.stamp = stamp{ino: st.ino} // read it again next time
	}
}

// ownPointerMoved reports whether the workspace's own .git at dotgit,
// when it is a file or a link (a worktree's, --separate-git-dir's), now
// leads somewhere other than the git directory it led to at the first
// walk: a command rewrote it, and it is checked as a planted one.
func (s *scanRun) ownPointerMoved(dotgit string) bool {
	fi, err := os.Lstat(dotgit)
	if err != nil || fi.IsDir() || len(s.own) == 0 {
		return false
	}
	target := evalOrClean(dotgit)
	if fi.Mode().IsRegular() {
		target = evalOrClean(readGitdirFile(dotgit))
	}
	return target != s.own[0]
}

// statDirs stats every known directory, spread over the CPUs: the scan
// is one Lstat per directory, and nearly all its time is in them.
func statDirs(root string, dirs map[string]*dirState) map[string]statResult {
	rels := make([]string, 0, len(dirs))
	for rel := range dirs {
		rels = append(rels, rel)
	}
	results := make([]statResult, len(rels))
	workers := min(runtime.GOMAXPROCS(0), 1+len(rels)/256)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(rels); i += workers {
				results[i].fi, results[i].err = os.Lstat(filepath.Join(root, rels[i]))
			}
		})
	}
	wg.Wait()
	stats := make(map[string]statResult, len(rels))
	for i, rel := range rels {
		stats[rel] = results[i]
	}
	return stats
}

// read lists the directory abs: its subdirectories and .git entries.
func (s *scanRun) read(abs string, st stamp) *dirState {
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil
	}
	state := &dirState{stamp: st}
	for _, e := range entries {
		switch {
		case IsGitName(e.Name()):
			state.gits = append(state.gits, e.Name())
		case e.IsDir():
			state.subdirs = append(state.subdirs, e.Name())
		}
	}
	return state
}

// repo checks the nested .git at rel: found new (isNew says the command
// made it), or known and perhaps changed.
func (s *scanRun) repo(rel string, isNew bool) {
	abs := filepath.Join(s.root, rel)
	key := repoStamp(abs)
	r, known := s.g.repos[rel]
	if !known {
		r = &repoState{}
		s.g.repos[rel] = r
	}
	r.gen = s.g.gen
	if known && r.key == key {
		return
	}
	r.key = key
	if !s.disarm || !(isNew || known) {
		return // there before the first command, or the user's
	}
	note, err := s.disarmRepo(rel, abs)
	switch {
	case err != nil:
		s.notes = append(s.notes, fmt.Sprintf("[hearth could not disarm %s: %v; do not run git there, and tell the user]", filepath.ToSlash(rel), err))
	case note != "":
		s.notes = append(s.notes, note)
		r.key = repoStamp(abs)
	}
}

// repoFiles are the files of a git directory whose change this guard
// watches: what git reads its settings from, and what points it at
// another repository.
var repoFiles = []string{"config", "config.worktree", "commondir"}

// repoStamp is the stamp of everything git reads at the .git abs that
// could run code: the entry itself, its config files, its hooks directory
// and each hook (not the *.sample ones git never runs). begin takes it of
// every known repository before a command (what the user changed
// meanwhile is theirs), so any change after is the command's.
func repoStamp(abs string) string {
	var b strings.Builder
	add := func(p string) {
		fi, err := os.Lstat(p)
		if err != nil {
			b.WriteString("-;")
			return
		}
		fmt.Fprintf(&b, "%v;", stampOf(fi))
	}
	add(abs)
	for _, f := range repoFiles {
		add(filepath.Join(abs, f))
	}
	hooks := filepath.Join(abs, "hooks")
	add(hooks)
	if entries, err := os.ReadDir(hooks); err == nil {
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".sample") {
				add(filepath.Join(hooks, e.Name()))
			}
		}
	}
	return b.String()
}

// disarmRepo disarms the nested .git at abs (rel relative to the root) if
// git would run code from it, and returns the note for the model ("" when
// it is harmless).
func (s *scanRun) disarmRepo(rel, abs string) (string, error) {
	shown := filepath.ToSlash(rel)
	fi, err := os.Lstat(abs)
	if err != nil {
		return "", nil // gone again
	}
	if !fi.IsDir() {
		return s.disarmPointer(rel, abs, fi)
	}
	var risks []string
	for _, f := range []string{"config", "config.worktree"} {
		risks = append(risks, gitConfigRisks(filepath.Join(abs, f))...)
	}
	if target := commondirTarget(abs); target != "" && !s.isOwn(target) {
		risks = append(risks, "its commondir points git at another repository's configuration")
	}
	hooks := executableHooks(filepath.Join(abs, "hooks"))
	if len(risks) == 0 && len(hooks) == 0 {
		return "", nil
	}
	var done []string
	if len(risks) > 0 {
		moved, err := moveConfigAside(abs)
		if err != nil {
			return "", err
		}
		for _, m := range moved {
			done = append(done, "its "+baseName(m.from)+" is now "+shown+"/"+baseName(m.to))
		}
	}
	if len(hooks) > 0 {
		for _, h := range hooks {
			risks = append(risks, "hooks/"+h+" is a hook git runs")
		}
		to, err := moveAside(filepath.Join(abs, "hooks"))
		if err != nil {
			return "", err
		}
		done = append(done, "its hooks are now in "+shown+"/"+baseName(to))
	}
	return fmt.Sprintf("[hearth disarmed %s: %s; %s]",
		shown, strings.Join(dedupe(risks), "; "), strings.Join(done, "; ")), nil
}

// disarmPointer handles a .git that is a file ("gitdir: X") or a symlink:
// harmless when it leads into the workspace's own repository (a
// submodule's or a worktree's), moved aside otherwise.
func (s *scanRun) disarmPointer(rel, abs string, fi fs.FileInfo) (string, error) {
	var target, what string
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, what = evalOrClean(abs), "a symlink"
		for _, own := range s.own {
			if UnderDir(target, own) {
				return "", nil
			}
		}
	case fi.Mode().IsRegular():
		target, what = readGitdirFile(abs), "a .git file"
		if target == "" {
			return "", nil // not a pointer git follows
		}
		target = evalOrClean(target)
		for _, own := range s.own {
			for _, sub := range []string{"worktrees", "modules"} {
				if UnderDir(target, filepath.Join(own, sub)) {
					return "", nil
				}
			}
		}
	default:
		return "", nil
	}
	to, err := moveAside(abs)
	if err != nil {
		return "", err
	}
	shown := filepath.ToSlash(rel)
	return fmt.Sprintf("[hearth disarmed %s: %s pointing git at %s, a repository that is not this workspace's, whose configuration could run anything; it is now %s]",
		shown, what, target, filepath.ToSlash(filepath.Join(filepath.Dir(rel), baseName(to)))), nil
}

// executableHooks lists the hooks in dir git would run: executable files
// not named *.sample.
func executableHooks(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var hooks []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sample") {
			continue
		}
		fi, err := os.Stat(filepath.Join(dir, e.Name()))
		if err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			hooks = append(hooks, e.Name())
		}
	}
	return hooks
}

// move is one rename moveConfigAside made.
type move struct{ from, to string }

// moveConfigAside moves the git directory gd's config files aside and
// writes a minimal config in their place, so git still sees a repository
// but reads nothing that runs.
func moveConfigAside(gd string) ([]move, error) {
	var moved []move
	for _, f := range repoFiles {
		p := filepath.Join(gd, f)
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		to, err := moveAside(p)
		if err != nil {
			return moved, err
		}
		moved = append(moved, move{p, to})
	}
	f, err := os.OpenFile(filepath.Join(gd, "config"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return moved, fmt.Errorf("write a safe config: %w", err)
	}
	_, err = f.WriteString(safeGitConfig)
	return moved, errors.Join(err, f.Close())
}

// safeGitConfig is the configuration a disarmed repository is left with.
const safeGitConfig = "# hearth moved this repository's configuration aside: it ran programs.\n[core]\n\trepositoryformatversion = 0\n\tbare = false\n"

// moveAside renames p to p.hearth-disarmed, or .hearth-disarmed.N when
// that is taken, so nothing disarmed before is lost; it returns the new
// path.
func moveAside(p string) (string, error) {
	for n := 1; n < 1000; n++ {
		to := p + ".hearth-disarmed"
		if n > 1 {
			to += fmt.Sprintf(".%d", n)
		}
		if _, err := os.Lstat(to); err == nil {
			continue
		}
		if err := os.Rename(p, to); err != nil {
			return "", fmt.Errorf("move %s aside: %w", baseName(p), err)
		}
		return to, nil
	}
	return "", fmt.Errorf("move %s aside: too many disarmed copies", baseName(p))
}

// dedupe is ss without repeats, in order.
func dedupe(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
