package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/hearthd/hearth/workspace/watch"
)

// Preview is what one tool call would do, computed without doing it, so the
// daemon can show the user before asking permission. Created by
// Toolset.Preview; a plain value the caller owns.
type Preview struct {
	Title     string     // as Result.Title, e.g. "Edit main.go"
	Kind      string     // the tool's Kind; "edit" for a shell call that is an apply_patch
	Locations []string   // workspace-relative paths the call would touch
	Diff      *FileDiff  // write_file, edit_file: the change to the file
	Files     []FileDiff // apply_patch: the change to each file, in the patch's order
	Command   string     // shell, exec_command: the command line, as given
	// Escalation is, for a command, whether the model asks to run it
	// with more than the mode gives, and why.
	Escalation Escalation
	// As names the tool the call runs as when that is not the one called:
	// "apply_patch" for a shell command that is an apply_patch invocation,
	// which the shell tool applies as apply_patch would, never running it.
	// Permission and mode rules are then apply_patch's.
	As string
}

// ToEditorOnly says that everything the call would change goes to the
// editor's buffers (ACP fs/write_text_file): nothing is written, moved or
// removed on disk by hearth itself.
func (p Preview) ToEditorOnly() bool {
	if p.Diff != nil {
		return p.Diff.Buffer
	}
	if len(p.Files) == 0 {
		return false
	}
	for _, f := range p.Files {
		if !f.Buffer || f.Deleted || f.From != "" {
			return false
		}
	}
	return true
}

// FileDiff is the change one call makes (Result) or would make (Preview) to
// one file. A plain value.
type FileDiff struct {
	Path    string // workspace-relative, slash-separated
	Old     string // the whole old text; "" for a file being created
	New     string // the whole new text; "" for a file deleted
	Unified string // unified diff of Old to New with 3 lines of context; "" if they are equal

	// apply_patch only:
	From    string // the file's path before a move to Path; "" when it stays
	Deleted bool   // the file is removed
	Hash    string // sha256 hex of New, for the read set; "" for a file deleted
	Buffer  bool   // New goes to the editor's buffer, not the disk
}

// maxDiffBytes bounds the text the unified diff is computed over; past it
// the diff is summarised (Old and New are still complete).
const maxDiffBytes = 2 << 20

// unifiedDiff returns the unified diff from old to new, labelled a/rel and
// b/rel (/dev/null for a file that did not exist).
func unifiedDiff(rel, old, new string, existed bool) string {
	if old == new {
		return ""
	}
	from := "a/" + rel
	if !existed {
		from = "/dev/null"
	}
	return diffLabelled(from, "b/"+rel, old, new)
}

// diffLabelled is the unified diff from old, labelled from, to new,
// labelled to; a rename with no change in the text says so.
func diffLabelled(from, to, old, new string) string {
	switch {
	case old == new && from != "/dev/null" && to != "/dev/null":
		return fmt.Sprintf("rename from %s\nrename to %s\n", strings.TrimPrefix(from, "a/"), strings.TrimPrefix(to, "b/"))
	case old == new:
		return ""
	case watch.IsBinary([]byte(old), true) || watch.IsBinary([]byte(new), true):
		return fmt.Sprintf("Binary files %s and %s differ\n", from, to)
	case len(old)+len(new) > maxDiffBytes:
		return fmt.Sprintf("Files %s and %s differ (too large to diff: %d and %d bytes)\n", from, to, len(old), len(new))
	}
	u, err := udiff.ToUnified(from, to, old, udiff.Lines(old, new), udiff.DefaultContextLines)
	if err != nil {
		// udiff's own edits are consistent; report rather than crash.
		return fmt.Sprintf("Files %s and %s differ (no diff: %v)\n", from, to, err)
	}
	return u
}

// Preview computes what the call of tool name with the model's JSON
// arguments would do, without doing it: for write_file and edit_file the
// new content and its diff, for shell the command. An error means the call
// is invalid; its message is the one Run would give, for the model. Read-only
// tools get their Title, Kind and Locations after the argument decoding and
// path checks Run starts with; Run may still fail later (a bad offset, a
// missing file).
// A call Preview accepts is only a prediction: Run recomputes everything
// from the files as they are when it runs.
func (ts *Toolset) Preview(ctx context.Context, name string, args json.RawMessage) (p Preview, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = Preview{}, fmt.Errorf("internal error in tool %s: %v; this is a bug in hearth, not in your call", name, r)
		}
	}()
	d := findTool(name)
	if d == nil {
		return Preview{}, errors.New(unknownToolResult(name).Output)
	}
	if ctx.Err() != nil {
		return Preview{}, errors.New(cancelledResult(name).Output)
	}
	preview := d.preview
	if preview == nil {
		preview = readOnlyPreviews[name]
	}
	p, msg := preview(ts, ctx, d, args)
	if msg != "" {
		return Preview{}, errors.New(msg)
	}
	if p.Kind == "" {
		p.Kind = d.Kind
	}
	return p, nil
}

// previewFunc computes a Preview, or the error message Run would give.
type previewFunc func(ts *Toolset, ctx context.Context, d *toolDef, args json.RawMessage) (Preview, string)

// readOnlyPreviews preview the tools that read. They need no permission, so
// only the title and locations matter: they decode the arguments, check the
// required ones and resolve the path, as Run does first, and leave every
// other check to Run.
var readOnlyPreviews = map[string]previewFunc{
	"view_image": func(ts *Toolset, _ context.Context, d *toolDef, raw json.RawMessage) (Preview, string) {
		var a viewImageArgs
		if msg := decodeArgs(d, raw, &a); msg != "" {
			return Preview{}, msg
		}
		if a.Path == nil {
			return Preview{}, missingArg(d, "path").Output
		}
		return pathPreview(ts, *a.Path, func(rel string) string { return "View " + rel })
	},
	"read_file": func(ts *Toolset, _ context.Context, d *toolDef, raw json.RawMessage) (Preview, string) {
		var a readFileArgs
		if msg := decodeArgs(d, raw, &a); msg != "" {
			return Preview{}, msg
		}
		if a.Path == nil {
			return Preview{}, missingArg(d, "path").Output
		}
		return pathPreview(ts, *a.Path, func(rel string) string { return "Read " + rel })
	},
	"list_dir": func(ts *Toolset, _ context.Context, d *toolDef, raw json.RawMessage) (Preview, string) {
		var a listDirArgs
		if msg := decodeArgs(d, raw, &a); msg != "" {
			return Preview{}, msg
		}
		if a.Path == nil {
			return Preview{}, missingArg(d, "path").Output
		}
		return pathPreview(ts, *a.Path, func(rel string) string { return "List " + dirTitle(rel) })
	},
	"grep": func(ts *Toolset, _ context.Context, d *toolDef, raw json.RawMessage) (Preview, string) {
		var a grepArgs
		if msg := decodeArgs(d, raw, &a); msg != "" {
			return Preview{}, msg
		}
		if a.Pattern == nil {
			return Preview{}, missingArg(d, "pattern").Output
		}
		path := "."
		if a.Path != nil {
			path = *a.Path
		}
		return pathPreview(ts, path, func(rel string) string { return fmt.Sprintf("Grep %q in %s", *a.Pattern, rel) })
	},
}

// pathPreview resolves path and titles the call after it.
func pathPreview(ts *Toolset, path string, title func(rel string) string) (Preview, string) {
	abs, err := ts.at.root.resolveIn(ts.at.dir, path)
	if err != nil {
		return Preview{}, err.Error()
	}
	rel := ts.at.root.Rel(abs)
	return Preview{Title: title(ts.at.show(rel)), Locations: []string{rel}}, ""
}

// commandTitle is a one-line title for a shell command: its first line,
// cut to 80 runes.
func commandTitle(command string) string {
	line, _, more := strings.Cut(strings.TrimSpace(command), "\n")
	if r := []rune(line); len(r) > 80 {
		line, more = string(r[:80]), true
	}
	if more {
		line += " …"
	}
	return "Run " + line
}
