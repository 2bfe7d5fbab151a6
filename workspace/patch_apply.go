package workspace

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/hearthd/hearth/workspace/patch"
	"github.com/hearthd/hearth/workspace/watch"
)

// patchFile is what a patch does to one file, computed before anything is
// written, so that a patch that cannot apply everywhere changes nothing.
// It lives for one Preview or Run of apply_patch.
type patchFile struct {
	op   *patch.Op
	put  *fileChange // the file written: added, updated, or a move's destination; nil for a delete
	gone *fileChange // the file removed: deleted, or a move's source; nil otherwise
}

// planPatch parses text, the patch, and computes every file's new content
// from the files as they are (through the editor when it takes the
// writes). Paths are relative to dir, itself relative to the workspace
// root (a shell invocation's `cd DIR`), and confined as write_file's are.
// A non-empty msg says why the patch cannot apply, for the model; then
// nothing may be written.
func (fw fileWriter) planPatch(ctx context.Context, dir, text string) (files []patchFile, msg string) {
	pt, err := patch.Parse(text)
	if err != nil {
		return nil, "invalid patch: " + err.Error()
	}
	touched := make(map[string]int) // absolute path → the patch line of the op that touches it
	for i := range pt.Ops {
		if ctx.Err() != nil {
			return nil, cancelledResult(applyPatchName).Output
		}
		op := &pt.Ops[i]
		f, msg := fw.planOp(ctx, dir, op)
		if msg != "" {
			return nil, msg
		}
		for _, c := range []*fileChange{f.put, f.gone} {
			if c == nil {
				continue
			}
			if line, dup := touched[c.abs]; dup {
				return nil, fmt.Sprintf("%s is changed twice, at lines %d and %d of the patch; give each file one section, with all its hunks", c.shown, line, op.Line)
			}
			touched[c.abs] = op.Line
		}
		files = append(files, f)
	}
	return files, ""
}

// planOp computes one operation of a patch.
func (fw fileWriter) planOp(ctx context.Context, dir string, op *patch.Op) (patchFile, string) {
	f := patchFile{op: op}
	c, msg := fw.loadTarget(ctx, applyPatchName, inDir(dir, op.Path))
	if msg != "" {
		return f, msg
	}
	switch op.Kind {
	case patch.OpAdd:
		if c.existed {
			return f, fmt.Sprintf("%s %s: the file already exists; change it with %s, or delete it first", patch.HeaderAdd, c.shown, patch.HeaderUpdate)
		}
		c.new = joinAdded(op.Lines)
		f.put = c
		return f, ""
	case patch.OpDelete:
		if !c.existed {
			return f, fmt.Sprintf("cannot read %s to delete it: there is no such file", c.shown)
		}
		if fw.isLink(inDir(dir, op.Path)) {
			return f, fmt.Sprintf("%s %s: the path is a symlink to %s; apply_patch does not remove links (nor the files they lead to): use shell to remove it", patch.HeaderDelete, op.Path, c.shown)
		}
		f.gone = c
		return f, ""
	}
	switch {
	case !c.existed:
		return f, fmt.Sprintf("cannot read %s to update it: there is no such file; create it with %s", c.shown, patch.HeaderAdd)
	case watch.IsBinary([]byte(c.old), true):
		return f, fmt.Sprintf("%s %s: it is a binary file; apply_patch changes text files only", patch.HeaderUpdate, c.shown)
	}
	newText, err := patch.ApplyHunks(c.shown, c.old, op.Hunks)
	if err != nil {
		return f, err.Error()
	}
	c.new = newText
	f.put = c
	if op.MoveTo == "" {
		return f, ""
	}
	dest, msg := fw.loadTarget(ctx, applyPatchName, inDir(dir, op.MoveTo))
	switch {
	case msg != "":
		return f, msg
	case fw.isLink(inDir(dir, op.Path)):
		return f, fmt.Sprintf("%s %s: the path is a symlink to %s; apply_patch does not move links: update %s itself, or use shell to move the link", patch.HeaderMove, op.MoveTo, c.shown, c.shown)
	case dest.abs == c.abs:
		return f, "" // moved onto itself: an update
	case dest.existed:
		return f, fmt.Sprintf("%s %s: the file already exists; move to a new path, or delete it first", patch.HeaderMove, dest.shown)
	}
	dest.new = newText
	dest.editor = false // a moved file is on disk before its source goes, whatever the editor creates
	f.put, f.gone = dest, c
	return f, ""
}

// isLink reports whether p, a path loadTarget accepted, is itself a
// symlink (its last component; links to directories on the way are the
// path's). Removing or moving what Resolve gives for it would remove the
// file the link leads to, which the model did not name.
func (fw fileWriter) isLink(p string) bool {
	name := filepath.Clean(p)
	if filepath.IsAbs(p) {
		name = fw.at.root.name(name)
	}
	fi, err := fw.at.root.handle().Lstat(name)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// inDir is p, a path from the patch, relative to dir.
func inDir(dir, p string) string {
	if dir == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// joinAdded is the text of an added file.
func joinAdded(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// diffs describes what the planned patch does, file by file, in the
// patch's order.
func patchDiffs(files []patchFile) []FileDiff {
	out := make([]FileDiff, 0, len(files))
	for _, f := range files {
		var d FileDiff
		switch {
		case f.put != nil && f.gone != nil: // moved
			d = FileDiff{Path: f.put.rel, From: f.gone.rel, Old: f.gone.old, New: f.put.new}
			d.Unified = diffLabelled("a/"+f.gone.rel, "b/"+f.put.rel, d.Old, d.New)
		case f.put != nil:
			d = *f.put.diff()
			d.Buffer = f.put.editor
		default:
			d = FileDiff{Path: f.gone.rel, Old: f.gone.old, Deleted: true}
			d.Unified = diffLabelled("a/"+f.gone.rel, "/dev/null", d.Old, "")
		}
		if !d.Deleted {
			d.Hash = contentHash(d.New)
		}
		out = append(out, d)
	}
	return out
}

// commitPatch writes a planned patch: every new content first (to the
// editor's buffer for a file it takes, atomically to the disk otherwise),
// then every removal. It stops at the first failure; the message then says
// which files were changed already, since those writes cannot be taken
// back.
func (fw fileWriter) commitPatch(ctx context.Context, files []patchFile) string {
	var done []string
	failed := func(rel, why string) string {
		msg := fmt.Sprintf("apply_patch failed at %s: %s", rel, why)
		if len(done) == 0 {
			return msg + "; nothing was changed"
		}
		return msg + fmt.Sprintf("; the patch is applied only in part: %s changed already, the rest did not. Read those files before patching again", strings.Join(done, ", "))
	}
	for _, f := range files {
		if f.put == nil {
			continue
		}
		if ctx.Err() != nil {
			return failed(f.put.shown, "cancelled")
		}
		if err := fw.checkpoint(ctx, f.put, false); err != nil {
			return failed(f.put.shown, err.Error())
		}
		if fw.onWrite != nil {
			fw.onWrite(f.put.rel, []byte(f.put.new))
		}
		if err := fw.commit(ctx, f.put); err != nil {
			return failed(f.put.shown, err.Error())
		}
		if f.gone != nil && f.gone.mode&0o111 != 0 {
			// A moved script stays executable; the file is there, so a
			// failure here loses nothing worth failing the patch for.
			_ = fw.at.root.handle().Chmod(f.put.name, f.gone.mode)
		}
		done = append(done, f.put.shown)
	}
	for _, f := range files {
		if f.gone == nil {
			continue
		}
		if err := fw.recheckGit(f.gone); err != nil {
			return failed(f.gone.shown, err.Error())
		}
		if err := fw.checkpoint(ctx, f.gone, true); err != nil {
			return failed(f.gone.shown, err.Error())
		}
		if err := fw.at.root.handle().Remove(f.gone.name); err != nil {
			return failed(f.gone.shown, useFailed("remove", f.gone.shown, err))
		}
		done = append(done, f.gone.shown)
	}
	return ""
}

// patchSummary is apply_patch's output for the model, in the shape the
// models were trained on: a success line, then one line a file, "A PATH"
// for an added file, "M PATH" for an updated one (a moved file under its
// new path), "D PATH" for a deleted one, added first, deleted last. Notes
// on the user's editor follow.
func patchSummary(files []patchFile) string {
	var b strings.Builder
	b.WriteString("Success. Updated the following files:\n")
	buffer, created := false, false
	for _, mark := range []byte("AMD") {
		for _, f := range files {
			switch {
			case mark == 'A' && f.op.Kind == patch.OpAdd:
				created = created || f.put.editor
			case mark == 'M' && f.op.Kind == patch.OpUpdate:
				buffer = buffer || f.put.editor
			case mark == 'D' && f.op.Kind == patch.OpDelete:
				fmt.Fprintf(&b, "D %s\n", f.gone.shown)
				continue
			default:
				continue
			}
			fmt.Fprintf(&b, "%c %s\n", mark, f.put.shown)
		}
	}
	if buffer {
		b.WriteString("Updated files open in the user's editor changed there, unsaved: shell commands see the files on disk, which keep their old text until the user saves.\n")
	}
	if created {
		b.WriteString("Added files were handed to the user's editor, which creates them: shell commands see them once the editor has saved them.\n")
	}
	return b.String()
}

// patchTitle is the call's title for the editor: what it does to its one
// file, or how many files it changes.
func patchTitle(files []patchFile) string {
	if len(files) != 1 {
		return fmt.Sprintf("Patch %d files", len(files))
	}
	switch f := files[0]; {
	case f.op.Kind == patch.OpAdd:
		return "Add " + f.put.shown
	case f.op.Kind == patch.OpDelete:
		return "Delete " + f.gone.shown
	case f.gone != nil:
		return fmt.Sprintf("Move %s to %s", f.gone.shown, f.put.shown)
	default:
		return "Patch " + f.put.shown
	}
}

// patchLocations lists the paths a patch touches: each file, and both ends
// of a move.
func patchLocations(files []patchFile) []string {
	var locs []string
	for _, f := range files {
		if f.gone != nil {
			locs = append(locs, f.gone.rel)
		}
		if f.put != nil {
			locs = append(locs, f.put.rel)
		}
	}
	return locs
}
