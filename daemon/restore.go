package daemon

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"sync"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/store"
	"github.com/hearthd/hearth/workspace"
)

// putBack is what putting back one or more turns' files did, each path
// named once, in the order first met. Built per undo or rewind.
type putBack struct {
	Restored, Removed, Conflicts, Failed []string
	Diffs                                []rpc.ConflictDiff // of the conflicts, in their order (conflict_diff.go)
	NotRestorable                        []string           // changed with no pre-image kept (command_checkpoints.go)
}

// restoreWorkers bounds the files put back at once: each write waits for
// its fsync, and a hundred of them one after the other took about 200 ms.
const restoreWorkers = 8

// fileOutcome is what putting back one file did.
type fileOutcome struct {
	path    string
	removed bool   // the turn created it: it is removed
	err     error  // ErrRestoreConflict, another failure, or nil
	skipped bool   // it ended as it began: nothing to do
	lost    bool   // its pre-image was not kept: left as it is
	diff    string // a conflict's: what the turn left against what is there now
}

// turn puts back the files of one checkpointed turn (checkpoints.go kept
// their pre-images): a changed file gets its content and mode back, a
// created one is removed, a removed one comes back. A file that no longer
// holds what the turn left is someone else's work: it is left as it is
// and named as a conflict (its content only: a mode changed since is put
// back without a word). A file whose content the turn left as it was but
// whose mode it changed gets its mode back. The writes go through ed, like
// the file tools', several at once: the files a turn changed are distinct
// paths, and every file that comes back does so before any is removed, so
// that a moved file is back before its copy goes. Directories the turn removed come back
// before any file (restore_dirs.go), those it made go after every file.
// The outcomes are named in the order of the turn's changes, the last
// first.
func (p *putBack) turn(ctx context.Context, objects objectStore, s *openSession, ed workspace.Editor, files []store.FileCheckpoint) {
	out := make([]fileOutcome, len(files))
	dirs := restoreDirs{r: workspace.Restorer{Tools: s.ws.tools, Editor: ed}, files: files, out: out}
	dirs.makeBack()
	var removals []int
	var wg sync.WaitGroup
	sem := make(chan struct{}, restoreWorkers)
	run := func(i int) {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i] = restoreFile(ctx, objects, s, ed, files[i])
		}()
	}
	for i := len(files) - 1; i >= 0; i-- { // the last change first
		f := files[i]
		switch {
		case unchanged(f):
			out[i] = fileOutcome{path: f.Path, skipped: true}
		case f.PreHash == unrestorable:
			out[i] = fileOutcome{path: f.Path, lost: true}
		case isDirRow(f):
			// restoreDirs' own.
		case f.PreHash == "":
			removals = append(removals, i)
		default:
			run(i)
		}
	}
	wg.Wait()
	for _, i := range removals {
		run(i)
	}
	wg.Wait()
	dirs.removeMade(ctx, objects, s, ed)
	for i := len(out) - 1; i >= 0; i-- {
		p.add(out[i])
	}
}

// unchanged reports whether f's file ended its turn as it began: its
// content, and its mode where known.
func unchanged(f store.FileCheckpoint) bool {
	return f.PreHash == f.Post && (f.PostMode == 0 || f.PostMode == f.PreMode)
}

// restoreFile puts back one file as it was before its turn.
func restoreFile(ctx context.Context, objects objectStore, s *openSession, ed workspace.Editor, f store.FileCheckpoint) fileOutcome {
	o := fileOutcome{path: f.Path, removed: f.PreHash == ""}
	var content *string
	if !o.removed {
		old, err := objects.get(f.PreHash)
		if err != nil {
			o.err = err
			return o
		}
		content = &old
	}
	o.err = workspace.Restorer{Tools: s.ws.tools, Editor: ed}.File(ctx, f.Path, f.Post, content, fs.FileMode(f.PreMode))
	if rc := (workspace.RestoreConflict{}); errors.As(o.err, &rc) {
		o.diff = conflictDiff(objects, f, rc.Now)
	}
	return o
}

// add names one file's outcome. A path met again (an older turn's change
// of it, in a rewind) takes its latest outcome: an older turn's text put
// back over a conflict is no conflict any more.
func (p *putBack) add(o fileOutcome) {
	drop := func(list []string) []string {
		return slices.DeleteFunc(list, func(q string) bool { return q == o.path })
	}
	if o.err == nil && !o.skipped && !o.lost {
		p.NotRestorable = drop(p.NotRestorable)
		p.Diffs = slices.DeleteFunc(p.Diffs, func(d rpc.ConflictDiff) bool { return d.Path == o.path })
	}
	switch {
	case o.skipped:
	case o.lost:
		p.NotRestorable = addOnce(p.NotRestorable, o.path)
	case errors.Is(o.err, workspace.ErrRestoreConflict):
		if !slices.Contains(p.Conflicts, o.path) {
			p.Conflicts = append(p.Conflicts, o.path)
			p.Diffs = append(p.Diffs, rpc.ConflictDiff{Path: o.path, Diff: o.diff})
		}
	case o.err != nil:
		p.Failed = addOnce(p.Failed, o.path+": "+o.err.Error())
	case o.removed:
		p.Conflicts, p.Restored = drop(p.Conflicts), drop(p.Restored)
		p.Removed = addOnce(p.Removed, o.path)
	default:
		p.Conflicts, p.Removed = drop(p.Conflicts), drop(p.Removed)
		p.Restored = addOnce(p.Restored, o.path)
	}
}

func addOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
