package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
)

// Change is what one write of write_file, edit_file or apply_patch is about
// to do to one file, handed to the checkpoint hook (WithCheckpoint) before
// the change becomes visible. A plain value; Old and New are the callee's to
// keep.
type Change struct {
	Rel     string      // the file, relative to the root, slash-separated
	Existed bool        // the file existed before: Old and Mode are its pre-image
	Mode    fs.FileMode // its permission bits, when it existed
	Old     string      // its content before (the editor's text when the editor takes the write)
	New     *string     // its content after; nil when the change removes it
}

// WithCheckpoint returns a copy of ts whose file writes call before first,
// on the goroutine running the call; an error from before refuses the write
// (nothing is changed), since a change whose pre-image is not kept could
// not be undone. The copy lives for one call, like via's.
func (ts *Toolset) WithCheckpoint(before func(ctx context.Context, c Change) error) *Toolset {
	c := *ts
	c.before = before
	return &c
}

// checkpoint hands c's change to the call's checkpoint hook, if any.
func (fw fileWriter) checkpoint(ctx context.Context, c *fileChange, removed bool) error {
	if fw.before == nil {
		return nil
	}
	ch := Change{Rel: c.rel, Existed: c.existed, Mode: c.mode, Old: c.old}
	if !removed {
		n := c.new
		ch.New = &n
	}
	if err := fw.before(ctx, ch); err != nil {
		return fmt.Errorf("cannot keep the checkpoint of %q, so it was not changed: %v", c.shown, err)
	}
	return nil
}

// ErrRestoreConflict is returned by RestoreVia for a file that no longer
// holds what the undone turn left in it: someone changed it since.
var ErrRestoreConflict = errors.New("changed since")

// RestoreVia puts the file rel (relative to the root) back as it was: to
// content with mode, or removed when content is nil, through ed like the
// file tools' writes. It first checks that the file holds what the turn
// left (want: its content's sha256 hex; "" for a file the turn removed);
// otherwise it changes nothing and returns ErrRestoreConflict.
func (ts *Toolset) RestoreVia(ctx context.Context, ed Editor, rel string, want string, content *string, mode fs.FileMode) error {
	fw := ts.In("").via(ed).files()
	fw.onWrite = ts.OnWrite
	c, msg := fw.loadTarget(ctx, "write_file", rel)
	if msg != "" {
		return errors.New(msg)
	}
	now := ""
	if c.existed {
		now = contentHash(c.old)
	}
	if now != want {
		return ErrRestoreConflict
	}
	if content == nil {
		if !c.existed {
			return nil
		}
		if err := fw.recheckGit(c); err != nil {
			return err
		}
		if err := fw.at.root.handle().Remove(c.name); err != nil {
			return errors.New(useFailed("remove", c.shown, err))
		}
		return nil
	}
	c.new = *content
	if fw.onWrite != nil {
		fw.onWrite(c.rel, []byte(c.new))
	}
	if !c.existed {
		c.editor = false // a file put back goes to the disk, with its mode
	}
	if err := fw.commit(ctx, c); err != nil {
		return err
	}
	if !c.existed && !c.editor {
		if err := fw.at.root.handle().Chmod(c.name, mode); err != nil {
			return fmt.Errorf("restore the mode of %q: %w", c.shown, err)
		}
	} else if c.existed && !c.editor && c.mode != mode {
		_ = fw.at.root.handle().Chmod(c.name, mode) // the content is back; a mode left as is loses nothing
	}
	return nil
}
