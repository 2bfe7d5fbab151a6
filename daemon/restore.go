package daemon

import (
	"context"
	"errors"
	"io/fs"
	"slices"

	"github.com/hearthd/hearth/store"
	"github.com/hearthd/hearth/workspace"
)

// putBack is what putting back one or more turns' files did, each path
// named once, in the order first met. Built per undo or rewind.
type putBack struct {
	Restored, Removed, Conflicts, Failed []string
}

// turn puts back the files of one checkpointed turn (checkpoints.go kept
// their pre-images), its last change first, so that a moved file comes
// back before its copy goes: a changed file gets its content and mode
// back, a created one is removed, a removed one comes back. A file that no
// longer holds what the turn left is someone else's work: it is left as
// it is and named as a conflict. The writes go through ed, like the file
// tools'.
func (p *putBack) turn(ctx context.Context, objects objectStore, s *openSession, ed workspace.Editor, files []store.FileCheckpoint) {
	for i := len(files) - 1; i >= 0; i-- {
		f := files[i]
		if f.PreHash == f.Post {
			continue
		}
		var content *string
		if f.PreHash != "" {
			old, err := objects.get(f.PreHash)
			if err != nil {
				p.Failed = addOnce(p.Failed, f.Path+": "+err.Error())
				continue
			}
			content = &old
		}
		err := workspace.Restorer{Tools: s.ws.tools, Editor: ed}.File(ctx, f.Path, f.Post, content, fs.FileMode(f.PreMode))
		switch {
		case errors.Is(err, workspace.ErrRestoreConflict):
			p.Conflicts = addOnce(p.Conflicts, f.Path)
		case err != nil:
			p.Failed = addOnce(p.Failed, f.Path+": "+err.Error())
		case content == nil:
			p.Conflicts = slices.DeleteFunc(p.Conflicts, func(q string) bool { return q == f.Path }) // an older turn's text is there
			p.Restored = slices.DeleteFunc(p.Restored, func(q string) bool { return q == f.Path })
			p.Removed = addOnce(p.Removed, f.Path)
		default:
			p.Conflicts = slices.DeleteFunc(p.Conflicts, func(q string) bool { return q == f.Path })
			p.Removed = slices.DeleteFunc(p.Removed, func(q string) bool { return q == f.Path })
			p.Restored = addOnce(p.Restored, f.Path)
		}
	}
}

func addOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
