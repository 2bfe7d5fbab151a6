package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
)

// view_image puts an image file of the workspace into the model's context,
// as the families trained on Codex's tools call it ({path}). read_file of
// an image does the same; this tool fails where read_file describes: a
// file that is not an image, or one too large to send, is an error the
// model can act on. The file is read from the disk through the root's
// handle, never from an editor's buffer (an editor holds text).
var viewImageDef = toolDef{
	Tool: Tool{
		Name:        "view_image",
		Description: "Look at an image file in the workspace (PNG, JPEG, GIF or WebP, up to 20 MiB): the image is added to your context with this call's result. Use it for screenshots, diagrams and other pictures the user points you to; read_file reads text.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"Image file path, relative to the working directory."}` +
			`},"required":["path"],"additionalProperties":false}`),
		Kind:     "read",
		ReadOnly: true,
	},
	fields:  []string{"path"},
	example: `{"path":"docs/screenshot.png"}`,
	run:     (*Toolset).viewImage,
}

type viewImageArgs struct {
	Path *string `json:"path"`
}

func (ts *Toolset) viewImage(ctx context.Context, d *toolDef, raw json.RawMessage) Result {
	var a viewImageArgs
	if msg := decodeArgs(d, raw, &a); msg != "" {
		return errorResult(msg)
	}
	if a.Path == nil {
		return missingArg(d, "path")
	}
	abs, name, err := ts.at.resolveName(*a.Path)
	if err != nil {
		return errorResult(err.Error())
	}
	rel := ts.at.root.Rel(abs)
	shown := ts.at.show(rel)
	res := ts.reader().viewImageAt(ctx, name, shown)
	res.Title = "View " + shown
	if !res.IsError {
		res.Locations = []string{rel}
	}
	return res
}

// viewImageAt reads the image name (the root handle's name for rel): the
// image and its hash for the read set, or an error that says why not.
func (fr fileReader) viewImageAt(ctx context.Context, name, rel string) Result {
	f, fi, err := fr.at.root.OpenRegular(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errorResult(fmt.Sprintf("file %q does not exist; use list_dir or grep to find the right path", rel))
	case err != nil && fi != nil && fi.IsDir():
		return errorResult(fmt.Sprintf("%q is a directory, not an image; use list_dir to see its entries", rel))
	case err != nil && fi != nil:
		return errorResult(fmt.Sprintf("%q is not a regular file (%v); only image files can be viewed", rel, fi.Mode().Type()))
	case err != nil:
		return errorResult(useFailed("read", rel, err))
	}
	defer f.Close()
	if fi.Size() > MaxImageBytes {
		return errorResult(fmt.Sprintf("%s is %s, larger than the %s of an image hearth sends to the model; ask the user for a smaller copy",
			rel, FormatBytes(fi.Size()), FormatBytes(MaxImageBytes)))
	}
	h := sha256.New()
	// The stat may be stale (the file is growing): never read past the cap.
	data, err := io.ReadAll(io.LimitReader(io.TeeReader(ctxReader{ctx, f}, h), MaxImageBytes+1))
	if err != nil {
		return readFailed(ctx, rel, err)
	}
	im, err := DecodeImage(data)
	if err != nil {
		return errorResult(fmt.Sprintf("%s: %v; view_image shows PNG, JPEG, GIF and WebP images (use read_file for text)", rel, err))
	}
	return Result{Hash: hashHex(h), Image: &im, Output: fmt.Sprintf("%s: %s. The image follows.", rel, im.Describe())}
}
