package daemon

import (
	"context"
	"fmt"
	"strings"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/store"
)

// undoPreview is _hearth/undo's dry run: what an undo of session id would
// do now, read from its checkpoints alone. It changes nothing, claims no
// turn and does not wait for a running one: a turn that is running when
// the undo itself runs after it may be the one undone. Conflicts are found
// only when the files are put back: the preview names every file the turn
// left changed as restored or removed.
func undoPreview(ctx context.Context, db *store.DB, id string) (rpc.UndoResult, error) {
	res := rpc.UndoResult{SessionID: id}
	_, files, found, err := db.Checkpoints().LastChanged(ctx, id)
	if err != nil {
		return res, err
	}
	if !found {
		res.Message = "Nothing to undo: no turn of this session left a file changed by hearth that is not undone already."
		res.Message += droppedLine(ctx, db, id, 0) // checkpoint_gc.go
		return res, nil
	}
	for i := len(files) - 1; i >= 0; i-- { // the last change first, as putBack names them
		switch f := files[i]; {
		case f.PreHash == f.Post:
		case f.PreHash == unrestorable:
			res.NotRestorable = addOnce(res.NotRestorable, f.Path)
		case f.PreHash == "":
			res.Removed = addOnce(res.Removed, f.Path)
		default:
			res.Restored = addOnce(res.Restored, f.Path)
		}
	}
	res.Message = previewMessage(res)
	return res, nil
}

// previewMessage says what an undo would do, for the user.
func previewMessage(r rpc.UndoResult) string {
	var b strings.Builder
	b.WriteString("Nothing was changed (a dry run). An undo would put back the file changes of this session's last turn that changed files.")
	list := func(what string, paths []string) {
		if len(paths) > 0 {
			fmt.Fprintf(&b, " %s: %s.", what, strings.Join(paths, ", "))
		}
	}
	list("To restore", r.Restored)
	list("To remove (created by that turn)", r.Removed)
	list("Not restorable (their content before that turn was not kept)", r.NotRestorable)
	b.WriteString(" A file changed since that turn would be left as it is, as a conflict.")
	return b.String()
}
