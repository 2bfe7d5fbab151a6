package daemon

import (
	"context"
	"io/fs"
	"slices"
	"strings"

	"github.com/hearthd/hearth/store"
	"github.com/hearthd/hearth/workspace"
)

// restoreDirs puts back the directories of one turn's checkpoint rows
// (command_checkpoints.go's directory rows): made again, with their mode,
// the shallowest first, before any file goes back in them; removed once
// empty, the deepest first, after the files in them are. A directory made
// by the turn that holds anything when its turn comes is someone's work
// since: left as it is and named as a conflict. Its outcomes name a
// directory with a trailing slash. Made by putBack.turn for one turn.
type restoreDirs struct {
	r     workspace.Restorer
	files []store.FileCheckpoint
	out   []fileOutcome // putBack.turn's, filled at the directories' indexes
}

// isDirRow reports whether f is a directory's row (before or after its
// turn; an unchanged one is skipped as a file's is).
func isDirRow(f store.FileCheckpoint) bool {
	return f.PreHash == directory || f.Post == directory
}

// makeBack makes the directories the turn removed, and gives those whose
// mode it changed their mode back.
func (d restoreDirs) makeBack() {
	for _, i := range d.pick(func(f store.FileCheckpoint) bool { return f.PreHash == directory }) {
		f := d.files[i]
		d.out[i] = fileOutcome{path: f.Path + "/", err: d.r.MakeDir(f.Path, fs.FileMode(f.PreMode))}
	}
	// Removing what the turn made comes after every file: removeMade.
}

// removeMade removes the directories the turn made. A file there before
// the turn, a directory after (rm f; mkdir f), comes back once it is gone.
func (d restoreDirs) removeMade(ctx context.Context, objects objectStore, s *openSession, ed workspace.Editor) {
	made := d.pick(func(f store.FileCheckpoint) bool { return f.PreHash != directory })
	slices.Reverse(made) // the deepest first
	for _, i := range made {
		f := d.files[i]
		d.out[i] = fileOutcome{path: f.Path + "/", removed: true, err: d.r.RemoveDir(f.Path)}
		if d.out[i].err == nil && f.PreHash != "" {
			f.Post = "" // the directory is gone: the file comes back where nothing is
			d.out[i] = restoreFile(ctx, objects, s, ed, f)
		}
	}
}

// pick returns the indexes of the turn's changed directory rows that
// match, in path order (a parent before its children).
func (d restoreDirs) pick(match func(store.FileCheckpoint) bool) []int {
	var idx []int
	for i, f := range d.files {
		if isDirRow(f) && !unchanged(f) && f.PreHash != unrestorable && match(f) {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(d.files[a].Path, d.files[b].Path) })
	return idx
}
