package watch

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fsnotify/fsnotify"
)

// fileMeta is what a Watcher remembers of one directory entry, for as long
// as the entry is in its snapshot: enough to tell a change (size, mtime,
// inode) and a rename (the inode survives it).
type fileMeta struct {
	size  int64
	mtime int64 // UnixNano
	ino   uint64
	dir   bool
}

func metaOf(fi fs.FileInfo) fileMeta {
	return fileMeta{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ino: fileID(fi), dir: fi.IsDir()}
}

// treeSnapshot is the Watcher's picture of the tree: every directory it
// watches (slash-separated, "" for the root) → its entries by name. Ignored
// paths are not in it. Owned by the loop goroutine.
type treeSnapshot map[string]map[string]fileMeta

// The methods below compare the disk with the snapshot, update the
// snapshot and record the differences in a batch. They run in two phases
// per flush: first every check and removal (checkPath, checkDir), then the
// new directories are watched and listed (watchNewDirs). Removing every
// stale watch before adding any keeps fsnotify from handing a moved
// directory's new path the watch it had under its old one.

func (l *loop) abs(rel string) string {
	if rel == "" {
		return l.root.Path()
	}
	return filepath.Join(l.root.Path(), filepath.FromSlash(rel))
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

func splitRel(rel string) (dir, name string) {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return "", rel
	}
	return rel[:i], rel[i+1:]
}

func vanished(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// checkPath compares one path an event named with the snapshot. op is what
// the events said happened to it.
func (l *loop) checkPath(rel string, op fsnotify.Op, b *flushBatch) {
	dir, name := splitRel(rel)
	node := l.tree[dir]
	if node == nil {
		return // its directory is gone or ignored: whoever handles that handles this
	}
	old, had := node[name]
	fi, err := os.Lstat(l.abs(rel))
	if err != nil {
		if had && vanished(err) {
			l.dropEntry(dir, name, old, b, op.Has(fsnotify.Rename), true)
		}
		return
	}
	l.reconcile(dir, name, old, had, fi, op, b, false)
}

// checkDir compares the listing of dir with the snapshot, and with
// recursive the same below it. quiet records the differences in the
// snapshot without reporting them (a .gitignore changed what is visible).
func (l *loop) checkDir(dir string, b *flushBatch, recursive, quiet bool) {
	node := l.tree[dir]
	if node == nil {
		return
	}
	rulesChanged := l.ign.Load(dir) // before judging the entries: its .gitignore may have changed unseen
	ents, err := readDirUnsorted(l.abs(dir))
	if err != nil {
		if dir == "" && vanished(err) {
			for name, m := range node {
				l.dropEntry(dir, name, m, b, false, !quiet)
			}
		}
		return // a subdirectory that is gone is its parent's business
	}
	onDisk := make(map[string]struct{}, len(ents))
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			continue // vanished since the listing: dropped below
		}
		name := e.Name()
		onDisk[name] = struct{}{}
		old, had := node[name]
		l.reconcile(dir, name, old, had, fi, 0, b, quiet)
		if recursive && had && old.dir && fi.IsDir() && old.ino == fileID(fi) {
			l.checkDir(joinRel(dir, name), b, true, quiet)
		}
	}
	for name, m := range node {
		if _, ok := onDisk[name]; !ok {
			l.dropEntry(dir, name, m, b, false, !quiet)
		}
	}
	if rulesChanged && !recursive {
		l.checkDir(dir, b, true, true) // the new rules apply all the way down
	}
}

// reconcile brings the snapshot's entry name of dir (old, if had) in line
// with fi, what is on disk now.
func (l *loop) reconcile(dir, name string, old fileMeta, had bool, fi fs.FileInfo, op fsnotify.Op, b *flushBatch, quiet bool) {
	node := l.tree[dir]
	rel := joinRel(dir, name)
	isDir := fi.IsDir()
	if l.ign.Ignored(rel, isDir) {
		l.noteIgnored(rel, isDir)
		if had {
			l.dropEntry(dir, name, old, b, false, false) // newly ignored: out of sight, not deleted
		}
		return
	}
	m := metaOf(fi)
	switch {
	case had && isDir && old.dir && old.ino == m.ino:
		node[name] = m // the same directory; its entries speak for themselves
		return
	case had && !isDir && !old.dir:
		// A write or create event is evidence enough: two writes within one
		// mtime tick leave size and mtime as they were.
		if m != old || op.Has(fsnotify.Write) || op.Has(fsnotify.Create) {
			node[name] = m
			if !quiet {
				b.modified = append(b.modified, found{rel: rel, m: m})
			}
		}
		return
	case had: // replaced by something else: a file by a directory, or a directory by another
		l.dropEntry(dir, name, old, b, op.Has(fsnotify.Rename), !quiet)
	}
	node[name] = m
	if !quiet {
		b.created = append(b.created, found{rel: rel, m: m})
	}
	if isDir {
		b.newDirs = append(b.newDirs, newDir{rel: rel, report: !quiet})
	}
}

// dropEntry removes name from dir's entries, and the whole subtree if it
// is a directory, reporting each path as deleted when report is set.
// moved says an event showed it renamed away.
func (l *loop) dropEntry(dir, name string, m fileMeta, b *flushBatch, moved, report bool) {
	delete(l.tree[dir], name)
	rel := joinRel(dir, name)
	if m.dir {
		l.dropSubtree(rel, b, report)
	}
	if report {
		b.deleted = append(b.deleted, found{rel: rel, m: m, moved: moved})
	}
}

func (l *loop) dropSubtree(rel string, b *flushBatch, report bool) {
	for name, m := range l.tree[rel] {
		child := joinRel(rel, name)
		if m.dir {
			l.dropSubtree(child, b, report)
		}
		if report {
			b.deleted = append(b.deleted, found{rel: child, m: m})
		}
	}
	delete(l.tree, rel)
	l.ign.forget(rel)
	if l.src != nil {
		_ = l.src.Remove(l.abs(rel)) // gone already, or moved: either way not ours to watch
	}
}

// watchNewDirs is the second phase: it watches and lists the directories
// the first found new, in the order found.
func (l *loop) watchNewDirs(b *flushBatch) {
	for i := 0; i < len(b.newDirs); i++ {
		nd := b.newDirs[i]
		dir, name := splitRel(nd.rel)
		if m, ok := l.tree[dir][name]; ok && m.dir && l.tree[nd.rel] == nil {
			// What was made in it before its watch gave no event: the
			// event log names it again, for its reader to look inside.
			l.w.events.add(nd.rel, fsnotify.Create)
			l.watchDir(nd.rel, b, nd.report)
		}
	}
}

// watchDir watches dir, then lists it into the snapshot, recursively, so
// that whatever is created after the watch raises an event and whatever was
// created before is listed. report records every entry found as created.
func (l *loop) watchDir(dir string, b *flushBatch, report bool) {
	if !l.mayWatch(dir) {
		return // past the first walk's limit, or outside a partial tree's scope (scope.go)
	}
	abs := l.abs(dir)
	if l.src != nil && l.limitErr == nil {
		if err := l.src.Add(abs); err != nil {
			switch {
			case isWatchLimit(err):
				l.limitErr = err // keep listing: polling needs the whole snapshot
			case vanished(err):
				return // removed already; its parent's events say so
			default:
				l.log.Warn("workspace: cannot watch directory", "dir", abs, "err", err)
			}
		}
	}
	node := make(map[string]fileMeta)
	l.tree[dir] = node
	l.ign.Load(dir)
	ents, err := readDirUnsorted(abs)
	if err != nil {
		return
	}
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			continue
		}
		rel := joinRel(dir, e.Name())
		if l.ign.Ignored(rel, fi.IsDir()) {
			l.noteIgnored(rel, fi.IsDir())
			continue
		}
		m := metaOf(fi)
		node[e.Name()] = m
		if report {
			b.created = append(b.created, found{rel: rel, m: m})
		}
		if m.dir {
			l.watchDir(rel, b, report)
		}
	}
}

// readDirUnsorted lists dir in the order the filesystem returns (os.ReadDir
// would sort, which a snapshot does not need).
func readDirUnsorted(dir string) ([]os.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// noteIgnored records rel, found ignored, in the event log when it is a
// directory the plant guard must look into itself (not .git, which it
// never enters, nor the marker directory).
func (l *loop) noteIgnored(rel string, isDir bool) {
	if _, name := splitRel(rel); isDir && !alwaysIgnored(name) && rel != l.ign.skip {
		l.w.events.noteIgnored(rel)
	}
}
