package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Editor is the editor a tool call works through, when it offers to: its
// buffers are what the user sees, unsaved changes included. A nil field means
// the editor does not offer that half and the tools use the disk, as they do
// for a zero Editor. The daemon builds one per call from the capabilities of
// the editor that sent the prompt (ACP fs/read_text_file and
// fs/write_text_file); this package never learns how it is reached.
//
// Every path handed to an Editor has been confined first (Root.Resolve, and
// the same checks as a disk access): the editor is never asked about a file
// outside the workspace. list_dir, grep and shell always see the disk.
type Editor struct {
	// Reader, if set, gives read_file its text of a file, and write_file and
	// edit_file the text they change when Writer is set too.
	Reader TextReader
	// Writer, if set, receives the new text of a file that exists, instead
	// of the disk: the editor shows it as an unsaved change. New files are
	// created on disk by hearth (through the root's handle, with their
	// directories), unless Creates is set too.
	Writer TextWriter
	// Creates hands new files to Writer as well: the editor creates them
	// (ACP's fs/write_text_file: the client creates a missing file), so
	// the user sees them where the other changes are. Nothing is created
	// on disk by hearth, not even their directories.
	Creates bool
}

// ErrEditorRefused is what a TextWriter's error wraps when the editor (or
// its user) refused the write, as opposed to failing it: the model is told
// not to try the same write again.
var ErrEditorRefused = errors.New("the editor refused the write")

// TextReader reads a file as the editor has it.
type TextReader interface {
	// ReadText returns the whole text of the file at abs, an absolute path
	// inside the workspace: the editor's buffer if it has one, else the file.
	ReadText(ctx context.Context, abs string) (string, error)
}

// TextWriter writes a file into the editor.
type TextWriter interface {
	// WriteText replaces the text of the file at abs, an absolute path
	// inside the workspace, in the editor's buffer, without saving it.
	WriteText(ctx context.Context, abs, content string) error
}

// RunVia is Run with the file tools going through ed: read_file reads the
// editor's text (the disk, with a note for the model, when the editor fails),
// write_file and edit_file change the editor's buffer (an editor that fails
// fails the call, with the reason for the model).
func (ts *Toolset) RunVia(ctx context.Context, ed Editor, name string, args json.RawMessage) Result {
	return ts.via(ed).Run(ctx, name, args)
}

// PreviewVia is Preview computed from the editor's text of the file, as
// RunVia with the same ed would change it.
func (ts *Toolset) PreviewVia(ctx context.Context, ed Editor, name string, args json.RawMessage) (Preview, error) {
	return ts.via(ed).Preview(ctx, name, args)
}

// via returns a copy of ts for one call through ed. The copy shares the root
// and OnWrite; it lives for that call.
func (ts *Toolset) via(ed Editor) *Toolset {
	c := *ts
	c.ed = ed
	return &c
}

// editorReadNote is appended to a read_file result that came from the disk
// because the editor could not give its text.
func editorReadNote(rel string, err error) string {
	return fmt.Sprintf("\n[note: the editor could not give its copy of %s (%v), so this is the file on disk; the user may have unsaved changes in it that you do not see]", rel, err)
}
