package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hearthd/hearth/workspace/watch"
)

var editFileDef = toolDef{
	Tool: Tool{
		Name:        "edit_file",
		Description: "Replace exact text in a file in the workspace. old_string must match the file exactly, including whitespace and indentation, and occur once unless replace_all is true.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"File path, relative to the working directory."},` +
			`"old_string":{"type":"string","description":"The exact text to replace."},` +
			`"new_string":{"type":"string","description":"The text to put in its place."},` +
			`"replace_all":{"type":"boolean","description":"Replace every occurrence instead of exactly one. Default false."}` +
			`},"required":["path","old_string","new_string"],"additionalProperties":false}`),
		Kind:     "edit",
		ReadOnly: false,
	},
	fields:  []string{"path", "old_string", "new_string", "replace_all"},
	example: `{"path":"main.go","old_string":"x := 1","new_string":"x := 2"}`,
	run:     (*Toolset).editFile,
	preview: (*Toolset).previewEditFile,
}

type editFileArgs struct {
	Path       *string `json:"path"`
	OldString  *string `json:"old_string"`
	NewString  *string `json:"new_string"`
	ReplaceAll *bool   `json:"replace_all"`
}

// planEditFile checks an edit_file call and computes its change and how many
// occurrences it replaces. A non-empty msg is the error for the model.
func (fw fileWriter) planEditFile(ctx context.Context, d *toolDef, raw json.RawMessage) (c *fileChange, n int, msg string) {
	var a editFileArgs
	if msg := decodeArgs(d, raw, &a); msg != "" {
		return nil, 0, msg
	}
	switch {
	case a.Path == nil:
		return nil, 0, missingArg(d, "path").Output
	case a.OldString == nil:
		return nil, 0, missingArg(d, "old_string").Output
	case a.NewString == nil:
		return nil, 0, missingArg(d, "new_string").Output
	}
	oldS, newS, all := *a.OldString, *a.NewString, a.ReplaceAll != nil && *a.ReplaceAll
	switch {
	case oldS == "":
		return nil, 0, "old_string is empty; copy the exact text to replace from the file (to replace the whole file, use write_file)"
	case oldS == newS:
		return nil, 0, "old_string and new_string are the same, so the edit would change nothing; give the replacement text as new_string"
	}
	c, msg = fw.loadTarget(ctx, d.Name, *a.Path)
	switch {
	case msg != "":
		return c, 0, msg
	case !c.existed:
		return c, 0, fmt.Sprintf("file %q does not exist; use write_file to create it, or list_dir to find the right path", c.shown)
	case watch.IsBinary([]byte(c.old), true):
		return c, 0, fmt.Sprintf("%q is a binary file; edit_file changes text files only", c.shown)
	}
	n = strings.Count(c.old, oldS)
	switch {
	case n == 0:
		msg := fmt.Sprintf("old_string not found in %s; read the file again and copy the exact text, including whitespace", c.shown)
		if strings.Contains(c.old, "\r\n") && strings.Contains(oldS, "\n") && !strings.Contains(oldS, "\r\n") {
			msg += " (the file has CRLF line endings)"
		}
		return c, 0, msg
	case n > 1 && !all:
		return c, 0, fmt.Sprintf("old_string occurs %d times in %s; include more surrounding lines to make it unique, or set replace_all to true to replace every occurrence", n, c.shown)
	case all:
		c.new = strings.ReplaceAll(c.old, oldS, newS)
	default:
		c.new = strings.Replace(c.old, oldS, newS, 1)
	}
	return c, n, ""
}

func (ts *Toolset) previewEditFile(ctx context.Context, d *toolDef, raw json.RawMessage) (Preview, string) {
	c, _, msg := ts.files().planEditFile(ctx, d, raw)
	if msg != "" {
		return Preview{}, msg
	}
	return Preview{Title: "Edit " + c.shown, Locations: []string{c.rel}, Diff: c.diff()}, ""
}

func (ts *Toolset) editFile(ctx context.Context, d *toolDef, raw json.RawMessage) Result {
	c, n, msg := ts.files().planEditFile(ctx, d, raw)
	if msg != "" {
		return changeFailed(c, "Edit ", msg)
	}
	out := fmt.Sprintf("Replaced 1 occurrence in %s.", c.shown)
	if n > 1 {
		out = fmt.Sprintf("Replaced %d occurrences in %s.", n, c.shown)
	}
	return ts.files().apply(ctx, d, c, "Edit ", out)
}
