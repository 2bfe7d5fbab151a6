package workspace

import (
	"context"
	"encoding/json"

	"github.com/hearthd/hearth/workspace/patch"
)

// shellAsPatch runs a shell call whose command is an apply_patch invocation
// as apply_patch; ok false means the call is an ordinary shell call.
func (ts *Toolset) shellAsPatch(ctx context.Context, raw json.RawMessage) (res Result, ok bool) {
	inv, isPatch, msg := patch.FromShellArgs(raw)
	if !isPatch {
		return Result{}, false
	}
	if msg != "" {
		return errorResult(msg), true
	}
	files, msg := ts.files().planPatchText(ctx, inv.Dir, inv.Text)
	if msg != "" {
		return errorResult(msg), true
	}
	return ts.files().runPatch(ctx, files), true
}

// previewShellPatch is shellAsPatch's Preview: apply_patch's, with As set.
func (ts *Toolset) previewShellPatch(ctx context.Context, raw json.RawMessage) (p Preview, msg string, ok bool) {
	inv, isPatch, msg := patch.FromShellArgs(raw)
	if !isPatch {
		return Preview{}, "", false
	}
	if msg != "" {
		return Preview{}, msg, true
	}
	files, msg := ts.files().planPatchText(ctx, inv.Dir, inv.Text)
	if msg != "" {
		return Preview{}, msg, true
	}
	p = patchPreview(files)
	p.As = applyPatchName
	return p, "", true
}
