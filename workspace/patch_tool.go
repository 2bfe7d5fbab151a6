package workspace

import (
	"context"
	"encoding/json"

	"github.com/hearthd/hearth/workspace/patch"
)

const applyPatchName = "apply_patch"

var applyPatchDef = toolDef{
	Tool: Tool{
		Name: applyPatchName,
		Description: "Change, add, delete or move files in the workspace with a patch. The patch starts with the line " +
			"`*** Begin Patch` and ends with `*** End Patch`; between them, one section per file. " +
			"`*** Add File: PATH` is followed by the new file's lines, each starting with `+`. " +
			"`*** Delete File: PATH` removes a file. " +
			"`*** Update File: PATH`, optionally followed by `*** Move to: NEW_PATH`, is followed by hunks: " +
			"each starts with an `@@` line (`@@ TEXT` narrows the search to after a line matching TEXT, such as " +
			"the enclosing function or class), then the hunk's lines: ` ` (a space) for an unchanged line, `-` for " +
			"a removed one, `+` for an added one. Give about 3 unchanged lines before and after each change, so it " +
			"is found in one place; when the last hunk of a file reaches its end, follow it with `*** End of File`. " +
			"Paths are relative to the working directory. The patch applies entirely or not at all.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"input":{"type":"string","description":"The whole patch, from *** Begin Patch to *** End Patch."}` +
			`},"required":["input"],"additionalProperties":false}`),
		Kind:     "edit",
		ReadOnly: false,
		Grammar:  patch.Grammar,
	},
	fields:  []string{"input"},
	example: `{"input":"*** Begin Patch\n*** Update File: main.go\n@@ func main() {\n-\tx := 1\n+\tx := 2\n*** End Patch\n"}`,
	run:     (*Toolset).applyPatch,
	preview: (*Toolset).previewApplyPatch,
}

type applyPatchArgs struct {
	Input *string `json:"input"`
}

// planApplyPatch checks an apply_patch call and computes its changes. A
// non-empty msg is the error for the model.
func (fw fileWriter) planApplyPatch(ctx context.Context, d *toolDef, raw json.RawMessage) ([]patchFile, string) {
	var a applyPatchArgs
	if msg := decodeArgs(d, raw, &a); msg != "" {
		return nil, msg
	}
	if a.Input == nil {
		return nil, missingArg(d, "input").Output
	}
	return fw.planPatchText(ctx, "", *a.Input)
}

// planPatchText plans a patch given as text, relative to dir, with the
// tool's name on its failure.
func (fw fileWriter) planPatchText(ctx context.Context, dir, text string) ([]patchFile, string) {
	files, msg := fw.planPatch(ctx, dir, text)
	if msg != "" {
		return nil, "apply_patch changed nothing: " + msg
	}
	return files, ""
}

func (ts *Toolset) previewApplyPatch(ctx context.Context, d *toolDef, raw json.RawMessage) (Preview, string) {
	files, msg := ts.files().planApplyPatch(ctx, d, raw)
	if msg != "" {
		return Preview{}, msg
	}
	return patchPreview(files), ""
}

func patchPreview(files []patchFile) Preview {
	return Preview{Title: patchTitle(files), Kind: "edit", Locations: patchLocations(files), Files: patchDiffs(files)}
}

func (ts *Toolset) applyPatch(ctx context.Context, d *toolDef, raw json.RawMessage) Result {
	files, msg := ts.files().planApplyPatch(ctx, d, raw)
	if msg != "" {
		return errorResult(msg)
	}
	return ts.files().runPatch(ctx, files)
}

// runPatch writes a planned patch and reports it.
func (fw fileWriter) runPatch(ctx context.Context, files []patchFile) Result {
	title := patchTitle(files)
	if ctx.Err() != nil {
		return Result{IsError: true, Title: title, Output: cancelledResult(applyPatchName).Output + "; nothing was changed"}
	}
	diffs := patchDiffs(files)
	res := Result{Title: title, Locations: patchLocations(files), Files: diffs}
	if msg := fw.commitPatch(ctx, files); msg != "" {
		res.IsError, res.Output, res.Files = true, msg, nil
		return res
	}
	res.Output = patchSummary(files)
	for _, d := range diffs {
		res.Buffer = res.Buffer || d.Buffer
	}
	return res
}
