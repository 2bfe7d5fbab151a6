package daemon

import (
	"context"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/store"
	"github.com/hearthd/hearth/workspace"
	"github.com/hearthd/hearth/workspace/watch"
)

// patchResult completes the session's result of an apply_patch (or of a
// shell command applied as one) from the files it changed. A
// session.ToolResult holds one diff and one read-set entry: a patch of one
// file fills both, as edit_file does; a patch of several shows its diffs in
// the preview and the permission prompt (the result lists the files in its
// output), and the read-set entries beyond the first go to the store at
// once instead of with the output. Deleted files, and the sources of moves,
// stay in the read set as gone (watch.GoneHash): the model knows they
// are, so the next context delta does not tell it.
func (t *sessionTools) patchResult(ctx context.Context, out *session.ToolResult, files []workspace.FileDiff) {
	if len(files) == 1 {
		f := files[0]
		out.Diff = &session.Diff{Path: f.Path, Old: f.Old, New: f.New}
	}
	bg := context.WithoutCancel(ctx) // the files changed: record it even if the turn ends now
	gone := func(rel string) {
		if err := t.d.db.Memory().SetSeen(bg, t.s.id, rel, store.Seen{Hash: watch.GoneHash}); err != nil {
			t.d.log.Warn("apply_patch: update read set", "err", err)
		}
	}
	for _, f := range files {
		if f.From != "" {
			gone(f.From)
		}
		if f.Deleted {
			gone(f.Path)
			continue
		}
		seen := store.Seen{Hash: f.Hash}
		if len(f.New) <= maxSeenContent {
			seen.Content = []byte(f.New)
		}
		if out.Seen == nil {
			out.Seen = &store.SeenWrite{Path: f.Path, Seen: seen}
			continue
		}
		if err := t.d.db.Memory().SetSeen(bg, t.s.id, f.Path, seen); err != nil {
			t.d.log.Warn("apply_patch: update read set", "err", err)
		}
	}
}
