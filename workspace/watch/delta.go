package watch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

// Seen is what the model last saw of one file (the session's read set):
// the content as read_file returned it or write_file/edit_file wrote it.
type Seen struct {
	Hash    string // sha256 hex of the whole file, as read_file reports it
	Content []byte // nil when not kept: a change is then named, not diffed
	// Load, when set, gives Content instead (nil when none is kept): a
	// delta calls it only for a file that changed, so a read set of many
	// files is not loaded whole for every delta.
	Load func() []byte
}

// GoneHash is the Hash of a read-set entry for a file the model deleted
// itself (apply_patch): the model knows it is gone, so its deletion is no
// news, and a file created there again is named as created. No file's
// hash is this.
const GoneHash = "gone"

// content is what the model saw of the file, nil when not kept.
func (s Seen) content() []byte {
	if s.Content == nil && s.Load != nil {
		return s.Load()
	}
	return s.Content
}

// DeltaCaps bound a Delta's Text; zero fields take the defaults.
type DeltaCaps struct {
	MaxBytes   int // default 16 KiB
	MaxEntries int // diffs plus listed paths; default 200
}

// Delta is what changed on disk since the model's last request, as a text
// to put in front of its next one. A plain value.
type Delta struct {
	Text     string // "" when nothing the model should hear about changed
	Next     uint64 // the cursor for the next Delta
	Overflow bool   // the journal lost track: the Text says anything may have changed
	// Updated holds the new content of read-set files whose diff the Text
	// shows (or that were renamed unchanged): the model has now seen it.
	Updated map[string]Seen
	// Forget lists read-set files the model no longer knows: deleted,
	// renamed away, binary, or changed without the diff shown.
	Forget []string
}

// deltaMaxFile is the largest file a Delta diffs (and so holds in memory);
// a larger one is hashed as it streams, up to ReadWholeMax.
const deltaMaxFile = 1 << 20

// Delta waits for the journal to hold every change made so far (Sync), then
// describes the changes since the cursor since: for files in seen (the
// read set) a unified diff from what the model saw to what is there now,
// for other paths lists of created, modified, renamed and deleted paths,
// all within caps.
func (w *Watcher) Delta(ctx context.Context, since uint64, seen map[string]Seen, caps DeltaCaps) (Delta, error) {
	return w.DeltaWith(ctx, since, seen, caps, nil)
}

// deltaLists are the named paths of a Delta, by section; they live for one
// buildDelta.
type deltaLists struct {
	created, modified, renamed, deleted []Change
	binary                              map[string]bool // modified paths to mark "(binary)"
}

// fileDiff is one read-set file's diff, before the caps decide on it; it
// lives for one buildDelta.
type fileDiff struct {
	path, from string
	text       string
	now        Seen
	oversize   bool // the diff is longer than a whole Text: named, and neither it nor now is kept
}

// buildDelta describes changes (collapsed, sorted) for a model whose read
// set is seen; overflow says the journal lost some.
func buildDelta(root Dir, changes []Change, overflow bool, seen map[string]Seen, caps DeltaCaps) Delta {
	if caps.MaxBytes <= 0 {
		caps.MaxBytes = 16 << 10
	}
	if caps.MaxEntries <= 0 {
		caps.MaxEntries = 200
	}
	b := &deltaBuild{root: root, seen: seen, caps: caps, covered: map[string]bool{},
		d: Delta{Overflow: overflow, Updated: map[string]Seen{}}, l: deltaLists{binary: map[string]bool{}}}
	for _, c := range changes {
		_, known := seen[c.Path]
		switch {
		case c.Op == Renamed && !c.Dir && inSeen(seen, c.Old) && seen[c.Old].Hash != GoneHash:
			b.check(c, c.Old)
		case c.Op == Renamed && !c.Dir && inSeen(seen, c.Old):
			// The model moved it (apply_patch's Move to): the old path is
			// gone as it knows; the new one is news only if it differs.
			b.d.Forget = append(b.d.Forget, c.Old)
			if known {
				b.check(Change{Op: Modified, Path: c.Path}, c.Path)
			} else {
				b.l.add(Change{Op: Created, Path: c.Path})
			}
		case c.Op == Deleted && known && seen[c.Path].Hash != GoneHash:
			b.covered[c.Path] = true
			b.d.Forget = append(b.d.Forget, c.Path)
			b.l.deleted = append(b.l.deleted, c)
		case !c.Dir && known: // a change, or a tombstone's deletion
			b.check(c, c.Path)
		default:
			b.l.add(c)
		}
	}
	if overflow {
		// The journal lost changes: look at every read-set file itself.
		for _, p := range seenPaths(seen) {
			if !b.covered[p] {
				b.check(Change{Op: Modified, Path: p}, p)
			}
		}
	}
	b.d.Text = renderDelta(&b.d, b.diffs, b.l, overflow, caps)
	sort.Strings(b.d.Forget)
	return b.d
}

// deltaBuild is what buildDelta gathers while it goes through the changes;
// it lives for one buildDelta.
type deltaBuild struct {
	root    Dir
	seen    map[string]Seen
	caps    DeltaCaps
	d       Delta
	l       deltaLists
	diffs   []fileDiff
	covered map[string]bool // read-set paths a change already accounted for
}

// check compares a read-set file (seen as from, now at c.Path) with the disk.
func (b *deltaBuild) check(c Change, from string) {
	b.covered[from] = true
	base := b.seen[from]
	f, err := readDeltaFile(b.root, c.Path)
	if base.Hash == GoneHash {
		// The model deleted it: gone is what it knows; there again, it is
		// new to the model.
		b.d.Forget = append(b.d.Forget, from)
		if err != errDeltaGone {
			b.l.created = append(b.l.created, Change{Op: Created, Path: c.Path})
		}
		return
	}
	if err == errDeltaGone {
		b.d.Forget = append(b.d.Forget, from)
		b.l.deleted = append(b.l.deleted, Change{Path: from})
		return
	}
	if c.Op == Renamed {
		b.l.renamed = append(b.l.renamed, c) // else the model never hears from is gone
		b.d.Forget = append(b.d.Forget, from)
	}
	switch {
	case err == nil && f.hash != "" && f.hash == base.Hash:
		// What the model saw: its own write echoed, a touch, a change
		// undone, or a rename.
		if from != c.Path {
			b.d.Updated[c.Path] = Seen{Hash: base.Hash, Content: base.content()}
		}
		return
	case err != nil || f.binary || f.content == nil:
		// Unreadable, binary, or too large to diff: named.
		b.l.modified = append(b.l.modified, c)
		b.l.binary[c.Path] = err == nil && f.binary
		if c.Op != Renamed {
			b.d.Forget = append(b.d.Forget, from)
		}
		return
	}
	if old := base.content(); old != nil && !IsBinary(old, true) {
		now := Seen{Hash: f.hash}
		if len(f.content) <= MaxContent { // the read set keeps no more
			now.Content = f.content
		}
		fd := fileDiff{path: c.Path, from: from, text: deltaDiff(from, c.Path, old, f.content), now: now}
		if len(fd.text) > b.caps.MaxBytes {
			fd = fileDiff{path: c.Path, from: from, oversize: true}
		}
		b.diffs = append(b.diffs, fd)
		return
	}
	if c.Op != Renamed {
		b.l.modified = append(b.l.modified, c)
	}
	b.d.Forget = append(b.d.Forget, c.Path)
}

func inSeen(m map[string]Seen, k string) bool { _, ok := m[k]; return ok }

func (l *deltaLists) add(c Change) {
	switch c.Op {
	case Created:
		l.created = append(l.created, c)
	case Modified:
		l.modified = append(l.modified, c)
	case Renamed:
		l.renamed = append(l.renamed, c)
	case Deleted:
		l.deleted = append(l.deleted, c)
	}
}

// renderDelta writes the Text: diffs first, then the lists, within caps.
// A diff that does not fit is named instead, and its file forgotten.
func renderDelta(d *Delta, diffs []fileDiff, l deltaLists, overflow bool, caps DeltaCaps) string {
	sections := []struct {
		title string
		items []string
	}{
		{"Created", createdNames(l.created)},
		{"Modified", modifiedNames(l.modified, l.binary)},
		{"Renamed", renamedNames(l.renamed)},
		{"Deleted", foldedNames(l.deleted)},
	}
	var listBytes int
	for _, s := range sections {
		for _, it := range s.items {
			listBytes += len(it) + 2
		}
	}
	if len(diffs) == 0 && listBytes == 0 && !overflow {
		return ""
	}
	const trailer = 120 // room for the last line
	var b strings.Builder
	b.WriteString("Files changed on disk since your last request:\n")
	if overflow {
		b.WriteString("More changed than hearth keeps track of: any file may have changed. Read files again before relying on earlier contents.\n")
	}
	entries := 0
	diffBudget := caps.MaxBytes - trailer - min(listBytes+40, caps.MaxBytes/4)
	var elided []Change
	sort.Slice(diffs, func(i, k int) bool { return diffs[i].path < diffs[k].path })
	for _, fd := range diffs {
		if !fd.oversize && entries < caps.MaxEntries && b.Len()+len(fd.text) <= diffBudget {
			b.WriteString(fd.text)
			d.Updated[fd.path] = fd.now
			entries++
			continue
		}
		elided = append(elided, Change{Op: Modified, Path: fd.path})
		d.Forget = append(d.Forget, fd.path)
	}
	if len(elided) > 0 {
		sections[1].items = append(modifiedNames(elided, nil), sections[1].items...)
	}
	more := 0
	for _, s := range sections {
		first := true
		for _, it := range s.items {
			if entries >= caps.MaxEntries || b.Len()+len(s.title)+len(it)+4 > caps.MaxBytes-trailer {
				more++
				continue
			}
			if first {
				b.WriteString(s.title + ": ")
				first = false
			} else {
				b.WriteString(", ")
			}
			b.WriteString(it)
			entries++
		}
		if !first {
			b.WriteString("\n")
		}
	}
	switch {
	case more > 0:
		fmt.Fprintf(&b, "... and %d more. Use read_file or list_dir to see current contents.\n", more)
	case len(elided) > 0:
		b.WriteString("Use read_file to see the current contents of files named without a diff.\n")
	}
	return b.String()
}

// createdNames lists created paths, directories with a trailing slash and
// left out when something created inside them is listed.
func createdNames(cs []Change) []string {
	filled := map[string]bool{}
	for _, c := range cs {
		for dir, _ := splitRel(c.Path); dir != "" && !filled[dir]; dir, _ = splitRel(dir) {
			filled[dir] = true
		}
	}
	var out []string
	for _, c := range cs {
		if !(c.Dir && filled[c.Path]) {
			out = append(out, changeName(c))
		}
	}
	return out
}

func modifiedNames(cs []Change, binary map[string]bool) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		if binary[c.Path] {
			out = append(out, c.Path+" (binary)")
		} else {
			out = append(out, changeName(c))
		}
	}
	return out
}

// renamedNames lists renames, leaving out those a renamed directory
// listed implies (its entries, moved along with it).
func renamedNames(cs []Change) []string {
	dirs := map[string]string{} // new path → old path
	for _, c := range cs {
		if c.Dir {
			dirs[c.Path] = c.Old
		}
	}
	var out []string
	for _, c := range cs {
		if !movedWithDir(c, dirs) {
			out = append(out, c.Old+" → "+changeName(c))
		}
	}
	return out
}

func movedWithDir(c Change, dirs map[string]string) bool {
	for dir, _ := splitRel(c.Path); dir != ""; dir, _ = splitRel(dir) {
		if old, ok := dirs[dir]; ok && c.Old == old+strings.TrimPrefix(c.Path, dir) {
			return true
		}
	}
	return false
}

// foldedNames lists deleted paths, leaving out those inside a deleted
// directory listed.
func foldedNames(cs []Change) []string {
	dirs := map[string]bool{}
	for _, c := range cs {
		if c.Dir {
			dirs[c.Path] = true
		}
	}
	var out []string
	for _, c := range cs {
		inside := false
		for dir, _ := splitRel(c.Path); dir != "" && !inside; dir, _ = splitRel(dir) {
			inside = dirs[dir]
		}
		if !inside {
			out = append(out, changeName(c))
		}
	}
	sort.Strings(out)
	return out
}

func changeName(c Change) string {
	if c.Dir {
		return c.Path + "/"
	}
	return c.Path
}

// deltaDiff is the diff from what the model saw (from) to what is on disk
// (path now), labelled like git's.
func deltaDiff(from, path string, old, now []byte) string {
	u, err := udiff.ToUnified("a/"+from, "b/"+path, string(old), udiff.Lines(string(old), string(now)), udiff.DefaultContextLines)
	if err != nil || u == "" {
		return fmt.Sprintf("%s changed (no diff: %v)\n", path, err)
	}
	return u
}

var errDeltaGone = errors.New("gone")

// deltaFile is a read-set file as a delta finds it on disk.
type deltaFile struct {
	content []byte // the whole file, when at most deltaMaxFile bytes
	hash    string // of the whole file; "" when over ReadWholeMax: not read
	binary  bool
}

// readDeltaFile reads a read-set file through the root's handle: whole
// when it is small enough to diff, else hashed as it streams (so a touch
// is told from a change), and not at all past ReadWholeMax (read_file did
// not hash it either). errDeltaGone when it no longer exists as a regular
// file.
func readDeltaFile(root Dir, rel string) (deltaFile, error) {
	abs, err := root.Resolve(rel)
	if err != nil {
		return deltaFile{}, err
	}
	name, err := filepath.Rel(root.Path(), abs)
	if err != nil {
		return deltaFile{}, err
	}
	f, fi, err := root.OpenRegular(name)
	if err != nil {
		if vanished(err) || fi != nil { // gone, or no longer a regular file
			return deltaFile{}, errDeltaGone
		}
		return deltaFile{}, err
	}
	defer f.Close()
	if fi.Size() > ReadWholeMax {
		return deltaFile{}, nil
	}
	h := sha256.New()
	buf := bytes.NewBuffer(make([]byte, 0, min(fi.Size(), deltaMaxFile)+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(io.TeeReader(f, h), deltaMaxFile+1)); err != nil {
		return deltaFile{}, err
	}
	b := buf.Bytes()
	df := deltaFile{binary: IsBinary(b[:min(len(b), SniffLen)], len(b) <= SniffLen)}
	if len(b) <= deltaMaxFile {
		df.content = b
	} else {
		n, err := io.Copy(h, io.LimitReader(f, ReadWholeMax+1-int64(len(b))))
		if err != nil {
			return deltaFile{}, err
		}
		if int64(len(b))+n > ReadWholeMax { // it grew past while being read
			return deltaFile{binary: df.binary}, nil
		}
	}
	df.hash = hex.EncodeToString(h.Sum(nil))
	return df, nil
}

func seenPaths(m map[string]Seen) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
