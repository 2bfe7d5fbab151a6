package watch

import (
	"crypto/sha256"
	"errors"
	"io"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// found is one path a flush found changed, with its meta (the old one for
// a deletion, the new one otherwise); it lives for one flush.
type found struct {
	rel   string
	m     fileMeta
	moved bool // deleted: an event said it was renamed away
}

// newDir is a directory a flush found new, to watch and list in its second
// phase; report says its contents are news (false when a .gitignore change
// merely made them visible).
type newDir struct {
	rel    string
	report bool
}

// flushBatch is what one flush found: a plain value owned by the loop for the
// length of the flush.
type flushBatch struct {
	created, modified, deleted []found
	newDirs                    []newDir
}

// commit turns b into journal entries: deleted + created pairs with the
// same inode become renames, changes hearth wrote itself are dropped, and
// the rest is journaled renames first and deletions last, each sorted.
func (l *loop) commit(b *flushBatch) {
	if len(b.created)+len(b.modified)+len(b.deleted) == 0 {
		return
	}
	var out []Change
	byIno := make(map[uint64]int, len(b.deleted))
	for i, d := range b.deleted {
		if d.m.ino != 0 {
			byIno[d.m.ino] = i
		}
	}
	paired := make([]bool, len(b.deleted))
	created := b.created[:0:0]
	for _, c := range b.created {
		i, ok := byIno[c.m.ino]
		if ok && c.m.ino != 0 && !paired[i] && sameObject(b.deleted[i], c) {
			paired[i] = true
			out = append(out, Change{Op: Renamed, Path: c.rel, Old: b.deleted[i].rel, Dir: c.m.dir})
			continue
		}
		created = append(created, c)
	}
	sortChanges(out)
	n := len(out)
	// A directory made only to hold what hearth wrote is hearth's too.
	var mine, theirs map[string]bool
	self := make([]bool, len(created))
	for i, c := range created {
		if !c.m.dir && l.w.selfWritten(c.rel) {
			self[i] = true
			mine = markAncestors(mine, c.rel)
		}
	}
	for i, c := range created {
		if self[i] {
			continue
		}
		out = append(out, Change{Op: Created, Path: c.rel, Dir: c.m.dir})
		if !c.m.dir || !mine[c.rel] {
			theirs = markAncestors(theirs, c.rel)
		}
	}
	if mine != nil {
		kept := out[:n]
		for _, c := range out[n:] {
			if !c.Dir || !mine[c.Path] || theirs[c.Path] {
				kept = append(kept, c)
			}
		}
		out = kept
	}
	sortChanges(out[n:])
	n = len(out)
	for _, c := range b.modified {
		if !l.w.selfWritten(c.rel) {
			out = append(out, Change{Op: Modified, Path: c.rel})
		}
	}
	sortChanges(out[n:])
	n = len(out)
	for i, d := range b.deleted {
		if !paired[i] {
			l.w.forgetSelfWrite(d.rel)
			out = append(out, Change{Op: Deleted, Path: d.rel, Dir: d.m.dir})
		}
	}
	sortChanges(out[n:])
	l.journal.append(out)
}

// markAncestors adds rel's parent directories to set, allocating it on
// first use.
func markAncestors(set map[string]bool, rel string) map[string]bool {
	if set == nil {
		set = map[string]bool{}
	}
	for dir, _ := splitRel(rel); dir != "" && !set[dir]; dir, _ = splitRel(dir) {
		set[dir] = true
	}
	return set
}

// sameObject says whether the deleted d and the created c are one file or
// directory renamed: the same inode, the same kind, and for a file either
// an event saying so or the same size and mtime (an inode number reused by
// a new file would differ there).
func sameObject(d, c found) bool {
	if d.m.dir != c.m.dir {
		return false
	}
	return d.m.dir || d.moved || (d.m.size == c.m.size && d.m.mtime == c.m.mtime)
}

func sortChanges(cs []Change) {
	sort.Slice(cs, func(i, k int) bool { return cs[i].Path < cs[k].Path })
}

// maxSelfWrites bounds the notes of what hearth wrote; past it an
// arbitrary note is dropped (its file then shows up as a change once).
const maxSelfWrites = 4096

// NoteSelfWrite tells w that hearth is about to write content to rel (a
// path relative to the root, or absolute inside it), so the change is not
// reported back as the user's: while the file's content hashes to what was
// noted, changes to it are dropped; the first different content is
// reported and ends the note. Call it before writing. Safe for concurrent
// use.
func (w *Watcher) NoteSelfWrite(rel string, content []byte) {
	rel = w.cleanRel(rel)
	if rel == "" {
		return
	}
	note := selfNote{sum: sha256.Sum256(content), size: int64(len(content))}
	w.selfMu.Lock()
	defer w.selfMu.Unlock()
	if _, ok := w.self[rel]; !ok && len(w.self) >= maxSelfWrites {
		for k := range w.self {
			delete(w.self, k)
			break
		}
	}
	w.self[rel] = note
}

// selfNote is what NoteSelfWrite remembers of a write: the content's hash
// and size (a file of another size is told apart without reading it).
type selfNote struct {
	sum  [sha256.Size]byte
	size int64
}

// cleanRel turns a caller's path into the journal's form: relative to the
// root, slash-separated, clean; "" for the root or a path outside it.
func (w *Watcher) cleanRel(p string) string {
	if filepath.IsAbs(p) {
		p = w.root.Rel(filepath.Clean(p))
		if filepath.IsAbs(p) {
			return ""
		}
	}
	p = path.Clean(filepath.ToSlash(p))
	if p == "." || p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") {
		return ""
	}
	return p
}

// selfWritten reports whether rel's content now is what hearth noted it
// wrote; a different content ends the note.
func (w *Watcher) selfWritten(rel string) bool {
	w.selfMu.Lock()
	want, ok := w.self[rel]
	w.selfMu.Unlock()
	if !ok {
		return false
	}
	got, err := fileSum(w.root, rel, want.size)
	if err == nil && got == want.sum {
		return true
	}
	w.selfMu.Lock()
	if w.self[rel] == want { // not renewed meanwhile
		delete(w.self, rel)
	}
	w.selfMu.Unlock()
	return false
}

func (w *Watcher) forgetSelfWrite(rel string) {
	w.selfMu.Lock()
	delete(w.self, rel)
	w.selfMu.Unlock()
}

// fileSum hashes the regular file rel, read through the root's handle,
// when it is size bytes long (errSizeDiffers, unread, otherwise).
func fileSum(root Dir, rel string, size int64) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	f, fi, err := root.OpenRegular(filepath.FromSlash(rel))
	if err != nil {
		return sum, err
	}
	defer f.Close()
	if fi.Size() != size {
		return sum, errSizeDiffers
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return sum, err
	}
	h.Sum(sum[:0])
	return sum, nil
}

var errSizeDiffers = errors.New("size differs")
