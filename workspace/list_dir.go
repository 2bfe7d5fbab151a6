package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// maxListEntries caps one listing; a directory bigger than that is better
// searched with grep than read whole.
const maxListEntries = 1000

var listDirDef = toolDef{
	Tool: Tool{
		Name:        "list_dir",
		Description: "List a directory in the workspace. Directories end with /, symlinks show their target as name -> target.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"Directory path, relative to the working directory (\".\")."}` +
			`},"required":["path"],"additionalProperties":false}`),
		Kind:     "read",
		ReadOnly: true,
	},
	fields:  []string{"path"},
	example: `{"path":"."}`,
	run:     (*Toolset).listDir,
}

type listDirArgs struct {
	Path *string `json:"path"`
}

func (ts *Toolset) listDir(ctx context.Context, d *toolDef, raw json.RawMessage) Result {
	var a listDirArgs
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
	res := listDirAt(ctx, ts.at.root.handle(), name, shown)
	res.Title = "List " + dirTitle(shown)
	if !res.IsError {
		res.Locations = []string{rel}
	}
	return res
}

// listDirAt lists name (the root handle's name for rel). The directory is
// opened once, through root, and both its entries and its symlinks' targets
// are read through that one handle.
func listDirAt(ctx context.Context, root *os.Root, name, rel string) Result {
	fi, err := root.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errorResult(fmt.Sprintf("directory %q does not exist; list its parent directory to see what is there", rel))
	case err != nil:
		return errorResult(useFailed("list", rel, err))
	case !fi.IsDir():
		return errorResult(fmt.Sprintf("%q is a file, not a directory; use read_file to read it", rel))
	}
	dir, err := openDir(root, name)
	if err != nil {
		return errorResult(useFailed("list", rel, err))
	}
	defer dir.Close()
	f, err := dir.Open(".")
	if err != nil {
		return errorResult(useFailed("list", rel, err))
	}
	defer f.Close()

	// Read in batches so a huge directory can be cancelled; all names are
	// needed anyway, since the listing is sorted.
	var entries []fs.DirEntry
	for {
		if ctx.Err() != nil {
			return cancelledResult("list_dir")
		}
		batch, err := f.ReadDir(1024)
		entries = append(entries, batch...)
		if err == io.EOF {
			break
		}
		if err != nil {
			return errorResult(fmt.Sprintf("cannot list %q: %v", rel, unwrapPathErr(err)))
		}
	}
	if len(entries) == 0 {
		return Result{Output: "(empty)"}
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })

	var out strings.Builder
	for _, e := range entries[:min(len(entries), maxListEntries)] {
		out.WriteString(entryLine(dir, e))
		out.WriteByte('\n')
	}
	if more := len(entries) - maxListEntries; more > 0 {
		fmt.Fprintf(&out, "[and %d more entries; use grep with a glob to find specific files]\n", more)
	}
	return Result{Output: out.String()}
}

// entryLine formats one entry of dir: "dir/", "link -> target" or "file".
func entryLine(dir *os.Root, e fs.DirEntry) string {
	switch {
	case e.Type()&fs.ModeSymlink != 0:
		target, err := dir.Readlink(e.Name())
		if err != nil {
			return e.Name() + " -> ?"
		}
		return e.Name() + " -> " + filepath.ToSlash(target)
	case e.IsDir():
		return e.Name() + "/"
	default:
		return e.Name()
	}
}

// dirTitle shows a workspace-relative directory as "src/", the root as "./".
func dirTitle(rel string) string {
	if strings.HasSuffix(rel, "/") {
		return rel
	}
	return rel + "/"
}
