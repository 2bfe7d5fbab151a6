package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

var writeFileDef = toolDef{
	Tool: Tool{
		Name:        "write_file",
		Description: "Create or overwrite a file in the workspace with the given content. Creates missing parent directories. To change part of an existing file, prefer edit_file.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"File path, relative to the working directory."},` +
			`"content":{"type":"string","description":"The complete new content of the file."}` +
			`},"required":["path","content"],"additionalProperties":false}`),
		Kind:     "edit",
		ReadOnly: false,
	},
	fields:  []string{"path", "content"},
	example: `{"path":"notes/todo.md","content":"# TODO\n"}`,
	run:     (*Toolset).writeFile,
	preview: (*Toolset).previewWriteFile,
}

type writeFileArgs struct {
	Path    *string `json:"path"`
	Content *string `json:"content"`
}

// planWriteFile checks a write_file call and computes its change. A non-empty
// msg is the error for the model.
func (fw fileWriter) planWriteFile(ctx context.Context, d *toolDef, raw json.RawMessage) (c *fileChange, msg string) {
	var a writeFileArgs
	if msg := decodeArgs(d, raw, &a); msg != "" {
		return nil, msg
	}
	switch {
	case a.Path == nil:
		return nil, missingArg(d, "path").Output
	case a.Content == nil:
		return nil, missingArg(d, "content").Output
	}
	c, msg = fw.loadTarget(ctx, d.Name, *a.Path)
	if msg != "" {
		return c, msg
	}
	c.new = *a.Content
	return c, ""
}

func (ts *Toolset) previewWriteFile(ctx context.Context, d *toolDef, raw json.RawMessage) (Preview, string) {
	c, msg := ts.files().planWriteFile(ctx, d, raw)
	if msg != "" {
		return Preview{}, msg
	}
	return Preview{Title: "Write " + c.shown, Locations: []string{c.rel}, Diff: c.diff()}, ""
}

func (ts *Toolset) writeFile(ctx context.Context, d *toolDef, raw json.RawMessage) Result {
	c, msg := ts.files().planWriteFile(ctx, d, raw)
	if msg != "" {
		return changeFailed(c, "Write ", msg)
	}
	var out string
	switch {
	case !c.existed:
		out = fmt.Sprintf("Created %s (%s).", c.shown, sizeText(c.new))
	case c.old == c.new:
		out = fmt.Sprintf("Wrote %s (%s); the content is unchanged.", c.shown, sizeText(c.new))
	default:
		out = fmt.Sprintf("Wrote %s (%s).", c.shown, sizeText(c.new))
	}
	return ts.files().apply(ctx, d, c, "Write ", out)
}

// apply writes a planned change and reports it: the Result every successful
// write_file and edit_file returns, with the diff and the new content's hash.
func (fw fileWriter) apply(ctx context.Context, d *toolDef, c *fileChange, verb, out string) Result {
	if ctx.Err() != nil {
		return changeFailed(c, verb, cancelledResult(d.Name).Output)
	}
	if err := fw.checkpoint(ctx, c, false); err != nil {
		return changeFailed(c, verb, err.Error())
	}
	// Told before the write, so the watcher can never see the change first
	// and report hearth's own write as the user's. (A failed write leaves
	// the old content, which does not match the note, so nothing is lost.)
	if fw.onWrite != nil {
		fw.onWrite(c.rel, []byte(c.new))
	}
	if err := fw.commit(ctx, c); err != nil {
		return changeFailed(c, verb, err.Error())
	}
	switch {
	case c.editor && !c.existed:
		out += " The new file was handed to the user's editor, which creates it: shell commands see it once the editor has saved it."
	case c.editor:
		out += " The change is in the user's editor, unsaved: shell commands see the file on disk, which keeps its old text until the user saves."
	}
	return Result{
		Output:    out,
		Title:     verb + c.shown,
		Locations: []string{c.rel},
		Hash:      contentHash(c.new),
		Diff:      c.diff(),
		Buffer:    c.editor,
	}
}

// changeFailed is the error Result of a write_file or edit_file call; it is
// titled after the file when the path got that far.
func changeFailed(c *fileChange, verb, msg string) Result {
	res := errorResult(msg)
	if c != nil {
		res.Title = verb + c.shown
	}
	return res
}

// sizeText describes content as "3 lines, 42 bytes".
func sizeText(content string) string {
	lines := strings.Count(content, "\n")
	if content != "" && !strings.HasSuffix(content, "\n") {
		lines++
	}
	return plural(lines, "line") + ", " + plural(len(content), "byte")
}

// plural formats "1 line", "2 lines".
func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
