package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
)

// Change is what one write of write_file, edit_file or apply_patch is about
// to do to one file, handed to Toolset.Checkpoint before
// the change becomes visible. A plain value; Old and New are the callee's to
// keep.
type Change struct {
	Rel     string      // the file, relative to the root, slash-separated
	Existed bool        // the file existed before: Old and Mode are its pre-image
	Mode    fs.FileMode // its permission bits, when it existed
	Old     string      // its content before (the editor's text when the editor takes the write)
	New     *string     // its content after; nil when the change removes it
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

// ErrRestoreConflict is returned by Restorer.File for a file that no longer
// holds what the undone turn left in it: someone changed it since.
var ErrRestoreConflict = errors.New("changed since")

// RestoreConflict is the error Restorer.File returns for a conflict, with
// what the file holds now as the restorer saw it (the editor's text when
// an editor holds it): what the conflict's diff is of. It is
// ErrRestoreConflict to errors.Is.
type RestoreConflict struct {
	Now *string // nil: the file is absent
}

func (RestoreConflict) Error() string        { return ErrRestoreConflict.Error() }
func (RestoreConflict) Is(target error) bool { return target == ErrRestoreConflict }

// Restorer puts files back as an undo wants them: through the workspace's
// tools (their confinement, their OnWrite) and an editor, like the file
// tools' writes. A plain value made for one undo.
type Restorer struct {
	Tools  *Toolset // the workspace's
	Editor Editor   // the editor the restored text goes to; zero: the disk
}

// File puts the file rel (relative to the root) back as it was: to content
// with mode, or removed when content is nil. It first checks that the file
// holds what the turn left (want: its content's sha256 hex; "" for a file
// the turn removed); otherwise it changes nothing and returns a
// RestoreConflict, or nil when the file is back as it was already (an undo
// a kill cut short, finished). Only the content counts: a file whose mode
// changed since, its content as the turn left it, gets its content and
// mode back; one whose content is as it was gets its mode back alone.
func (r Restorer) File(ctx context.Context, rel string, want string, content *string, mode fs.FileMode) error {
	fw := r.Tools.In("").via(r.Editor).files()
	fw.before = nil // putting back is not a change of the turn
	c, msg := fw.loadTarget(ctx, "write_file", rel)
	if msg != "" {
		return errors.New(msg)
	}
	now := ""
	if c.existed {
		now = contentHash(c.old)
	}
	if content != nil && c.existed && now == contentHash(*content) {
		// Its content is as it was: only its mode may not be (a change of
		// mode alone), whatever changed the mode since.
		if c.mode != mode {
			if err := fw.at.root.handle().Chmod(c.name, mode); err != nil {
				return fmt.Errorf("restore the mode of %q: %w", c.shown, err)
			}
		}
		return nil
	}
	if now != want {
		if content == nil && !c.existed {
			return nil
		}
		if !c.existed {
			return RestoreConflict{}
		}
		return RestoreConflict{Now: &c.old}
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
