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

func (w *Watcher) abs(rel string) string {
	if rel == "" {
		return w.root.Path()
	}
	return filepath.Join(w.root.Path(), filepath.FromSlash(rel))
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
func (w *Watcher) checkPath(rel string, op fsnotify.Op, b *flushBatch) {
	dir, name := splitRel(rel)
	node := w.tree[dir]
	if node == nil {
		return // its directory is gone or ignored: whoever handles that handles this
	}
	old, had := node[name]
	fi, err := os.Lstat(w.abs(rel))
	if err != nil {
		if had && vanished(err) {
			w.dropEntry(dir, name, old, b, op.Has(fsnotify.Rename), true)
		}
		return
	}
	w.reconcile(dir, name, old, had, fi, op, b, false)
}

// checkDir compares the listing of dir with the snapshot, and with
// recursive the same below it. quiet records the differences in the
// snapshot without reporting them (a .gitignore changed what is visible).
func (w *Watcher) checkDir(dir string, b *flushBatch, recursive, quiet bool) {
	node := w.tree[dir]
	if node == nil {
		return
	}
	rulesChanged := w.ign.Load(dir) // before judging the entries: its .gitignore may have changed unseen
	ents, err := readDirUnsorted(w.abs(dir))
	if err != nil {
		if dir == "" && vanished(err) {
			for name, m := range node {
				w.dropEntry(dir, name, m, b, false, !quiet)
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
		w.reconcile(dir, name, old, had, fi, 0, b, quiet)
		if recursive && had && old.dir && fi.IsDir() && old.ino == fileID(fi) {
			w.checkDir(joinRel(dir, name), b, true, quiet)
		}
	}
	for name, m := range node {
		if _, ok := onDisk[name]; !ok {
			w.dropEntry(dir, name, m, b, false, !quiet)
		}
	}
	if rulesChanged && !recursive {
		w.checkDir(dir, b, true, true) // the new rules apply all the way down
	}
}

// reconcile brings the snapshot's entry name of dir (old, if had) in line
// with fi, what is on disk now.
func (w *Watcher) reconcile(dir, name string, old fileMeta, had bool, fi fs.FileInfo, op fsnotify.Op, b *flushBatch, quiet bool) {
	node := w.tree[dir]
	rel := joinRel(dir, name)
	isDir := fi.IsDir()
	if w.ign.Ignored(rel, isDir) {
		if had {
			w.dropEntry(dir, name, old, b, false, false) // newly ignored: out of sight, not deleted
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
		w.dropEntry(dir, name, old, b, op.Has(fsnotify.Rename), !quiet)
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
func (w *Watcher) dropEntry(dir, name string, m fileMeta, b *flushBatch, moved, report bool) {
	delete(w.tree[dir], name)
	rel := joinRel(dir, name)
	if m.dir {
		w.dropSubtree(rel, b, report)
	}
	if report {
		b.deleted = append(b.deleted, found{rel: rel, m: m, moved: moved})
	}
}

func (w *Watcher) dropSubtree(rel string, b *flushBatch, report bool) {
	for name, m := range w.tree[rel] {
		child := joinRel(rel, name)
		if m.dir {
			w.dropSubtree(child, b, report)
		}
		if report {
			b.deleted = append(b.deleted, found{rel: child, m: m})
		}
	}
	delete(w.tree, rel)
	w.ign.forget(rel)
	if w.src != nil {
		_ = w.src.Remove(w.abs(rel)) // gone already, or moved: either way not ours to watch
	}
}

// watchNewDirs is the second phase: it watches and lists the directories
// the first found new, in the order found.
func (w *Watcher) watchNewDirs(b *flushBatch) {
	for i := 0; i < len(b.newDirs); i++ {
		nd := b.newDirs[i]
		dir, name := splitRel(nd.rel)
		if m, ok := w.tree[dir][name]; ok && m.dir && w.tree[nd.rel] == nil {
			w.watchDir(nd.rel, b, nd.report)
		}
	}
}

// watchDir watches dir, then lists it into the snapshot, recursively, so
// that whatever is created after the watch raises an event and whatever was
// created before is listed. report records every entry found as created.
func (w *Watcher) watchDir(dir string, b *flushBatch, report bool) {
	if !w.mayWatch(dir) {
		return // past the first walk's limit, or outside a partial tree's scope (scope.go)
	}
	abs := w.abs(dir)
	if w.src != nil && w.limitErr == nil {
		if err := w.src.Add(abs); err != nil {
			switch {
			case isWatchLimit(err):
				w.limitErr = err // keep listing: polling needs the whole snapshot
			case vanished(err):
				return // removed already; its parent's events say so
			default:
				w.log.Warn("workspace: cannot watch directory", "dir", abs, "err", err)
			}
		}
	}
	node := make(map[string]fileMeta)
	w.tree[dir] = node
	w.ign.Load(dir)
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
		if w.ign.Ignored(rel, fi.IsDir()) {
			continue
		}
		m := metaOf(fi)
		node[e.Name()] = m
		if report {
			b.created = append(b.created, found{rel: rel, m: m})
		}
		if m.dir {
			w.watchDir(rel, b, report)
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
