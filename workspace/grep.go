package workspace

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hearthd/hearth/workspace/watch"
)

const (
	maxGrepMatches   = 200      // matching lines shown per call
	maxGrepLineRunes = 200      // a shown line is cut after this many runes
	maxGrepLineBytes = 64 << 10 // the pattern sees at most this much of a line
)

// skippedDirs are never descended by grep: version control internals and
// dependency trees are noise for the model and can be huge.
var skippedDirs = map[string]bool{".git": true, "node_modules": true}

var grepDef = toolDef{
	Tool: Tool{
		Name:        "grep",
		Description: "Search text files in the workspace for a regular expression (Go RE2 syntax). Returns path:line:text for each matching line. Skips .git, what .gitignore files and the usual dependency/build directories exclude, and binary files.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"pattern":{"type":"string","description":"Regular expression in Go RE2 syntax (no lookaround or backreferences). Use (?i) for case-insensitive."},` +
			`"path":{"type":"string","description":"File or directory to search, relative to the working directory. Default: the working directory."},` +
			`"glob":{"type":"string","description":"Only search files matching this glob: a base name like *.go, or a path like src/**/*.ts."}` +
			`},"required":["pattern"],"additionalProperties":false}`),
		Kind:     "search",
		ReadOnly: true,
	},
	fields:  []string{"pattern", "path", "glob"},
	example: `{"pattern":"func main","path":".","glob":"*.go"}`,
	run:     (*Toolset).grep,
}

type grepArgs struct {
	Pattern *string `json:"pattern"`
	Path    *string `json:"path"`
	Glob    *string `json:"glob"`
}

// grepRun is the state of one grep call; it lives for that call only.
type grepRun struct {
	ctx     context.Context
	root    *Root
	ts      *Toolset // shows the paths relative to the working directory
	re      *regexp.Regexp
	glob    string
	start   string // the directory the walk starts at, relative to the root, slash-separated ("." for the root)
	out     strings.Builder
	matches int            // all matching lines, shown or not
	binary  int            // binary files skipped
	files   []string       // files with shown matches, in walk order
	ignore  *watch.Ignorer // .gitignore rules and the default list, loaded as the walk enters directories
	br      *bufio.Reader
	buf     []byte // the current line, reused
	entry   []byte // the current output line, reused
}

func (ts *Toolset) grep(ctx context.Context, d *toolDef, raw json.RawMessage) Result {
	var a grepArgs
	if msg := decodeArgs(d, raw, &a); msg != "" {
		return errorResult(msg)
	}
	if a.Pattern == nil {
		return missingArg(d, "pattern")
	}
	if *a.Pattern == "" {
		return errorResult(`pattern is empty; give a regular expression to search for, e.g. {"pattern":"TODO"}`)
	}
	re, err := regexp.Compile(*a.Pattern)
	if err != nil {
		return errorResult(fmt.Sprintf("invalid regular expression %q: %v. The syntax is Go RE2: no lookaround or backreferences; escape literal special characters like ( [ . * with a backslash", *a.Pattern, strings.TrimPrefix(err.Error(), "error parsing regexp: ")))
	}
	g := &grepRun{ctx: ctx, root: ts.at.root, re: re, ts: ts}
	if a.Glob != nil && *a.Glob != "" {
		g.glob = filepath.ToSlash(*a.Glob)
		if _, err := path.Match(g.glob, ""); err != nil {
			return errorResult(fmt.Sprintf("invalid glob %q: %v; use patterns like *.go or src/**/*.ts", *a.Glob, err))
		}
	}
	p := "."
	if a.Path != nil {
		p = *a.Path
	}
	abs, name, err := ts.at.resolveName(p)
	if err != nil {
		return errorResult(err.Error())
	}
	rel := ts.at.root.Rel(abs)
	shown := ts.at.show(rel)
	title := fmt.Sprintf("Grep %q in %s", *a.Pattern, shown)

	fi, err := ts.at.root.handle().Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Result{IsError: true, Title: title, Output: fmt.Sprintf("%q does not exist; use list_dir to find the right path, or leave path out to search the working directory", shown)}
	case err != nil:
		return Result{IsError: true, Title: title, Output: useFailed("search", shown, err)}
	case !fi.IsDir() && !fi.Mode().IsRegular():
		return Result{IsError: true, Title: title, Output: fmt.Sprintf("%q is not a regular file (%v); give a directory or a text file", shown, fi.Mode().Type())}
	}
	g.br = bufio.NewReaderSize(nil, 64<<10)
	err = g.search(name, rel, fi.IsDir())
	if ctx.Err() != nil {
		return Result{IsError: true, Title: title, Output: cancelledResult("grep").Output}
	}
	if err != nil {
		return Result{IsError: true, Title: title, Output: useFailed("search", shown, err)}
	}
	if g.matches == 0 && !fi.IsDir() && g.binary > 0 {
		return Result{Title: title, Output: fmt.Sprintf("%s is a binary file; grep searches text files only", shown)}
	}
	if g.matches == 0 {
		return Result{Title: title, Output: fmt.Sprintf("no matches for %q in %s", *a.Pattern, shown)}
	}
	if more := g.matches - maxGrepMatches; more > 0 {
		fmt.Fprintf(&g.out, "[and %d more matches; narrow the pattern, path or glob]\n", more)
	}
	return Result{Title: title, Output: g.out.String(), Locations: g.files}
}

// search runs g over what name (rel, as the model named it) is: the tree
// below a directory, with the ignore rules of the directory and its
// ancestors, or one file, whatever the glob says.
func (g *grepRun) search(name, rel string, dir bool) error {
	if !dir {
		f, _, err := g.root.OpenRegular(name)
		if err != nil {
			if escaped(err) {
				return err
			}
			return nil // as any file that cannot be opened: skipped
		}
		defer f.Close()
		return g.file(f, rel)
	}
	g.start = rel
	g.ignore = watch.NewIgnorer(g.root, watch.SearchIgnore)
	d := ""
	g.ignore.Load(d)
	if rel != "." {
		for _, part := range strings.Split(rel, "/") {
			d = path.Join(d, part)
			g.ignore.Load(d)
		}
	}
	top, err := openDir(g.root.handle(), name)
	if err != nil {
		return err
	}
	defer top.Close()
	return g.walk(top, rel, true)
}

// walk searches dir, an open handle on the directory rel (relative to the
// root, slash-separated), and below it, in name order. Each subdirectory is
// opened through its parent's handle and each file through its directory's,
// so the walk never leaves the tree it started in, whatever is renamed or
// swapped meanwhile; symlinked directories are never descended, and
// symlinked files are searched only when they resolve inside the root,
// opened through the root's handle. Errors below the start directory skip
// what they concern; only the start directory's and cancellation end the
// walk.
func (g *grepRun) walk(dir *os.Root, rel string, top bool) error {
	f, err := dir.Open(".")
	if err != nil {
		return g.walkErr(err, top)
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return g.walkErr(err, top)
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range ents {
		if err := g.ctx.Err(); err != nil {
			return err
		}
		child := e.Name()
		if rel != "." {
			child = rel + "/" + e.Name()
		}
		if e.IsDir() {
			if skippedDirs[e.Name()] || g.ignore.Ignored(child, true) {
				continue
			}
			g.ignore.Load(child)
			sub, err := openDir(dir, e.Name())
			if err != nil {
				continue // unreadable, or no longer a directory
			}
			err = g.walk(sub, child, false)
			sub.Close()
			if err != nil {
				return err
			}
			continue
		}
		if g.ignore.Ignored(child, false) {
			continue
		}
		if !e.Type().IsRegular() && e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		if g.glob != "" && !g.globMatches(child) {
			continue
		}
		var file *os.File
		if e.Type()&fs.ModeSymlink != 0 {
			_, name, err := g.root.resolveName(child)
			if err != nil {
				continue
			}
			file, _, err = g.root.OpenRegular(name)
			if err != nil {
				continue
			}
		} else {
			file, err = dir.OpenFile(e.Name(), os.O_RDONLY|watch.OpenNonblock, 0)
			if err != nil {
				continue
			}
			if fi, err := file.Stat(); err != nil || !fi.Mode().IsRegular() {
				file.Close()
				continue
			}
		}
		err = g.file(file, child)
		file.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// walkErr is what an error listing a directory means: the end of the walk
// for the start directory or a cancellation, nothing (skip it) otherwise.
func (g *grepRun) walkErr(err error, top bool) error {
	if cerr := g.ctx.Err(); cerr != nil {
		return cerr
	}
	if top {
		return err
	}
	return nil
}

// globMatches matches a glob without "/" against the base name, and one with
// "/" against the path relative to the root or to the searched directory.
func (g *grepRun) globMatches(rel string) bool {
	if !strings.Contains(g.glob, "/") {
		ok, _ := path.Match(g.glob, path.Base(rel))
		return ok
	}
	if matchSegments(strings.Split(g.glob, "/"), strings.Split(rel, "/")) {
		return true
	}
	fromStart, ok := rel, true
	if g.start != "." {
		fromStart, ok = strings.CutPrefix(rel, g.start+"/")
	}
	return ok && matchSegments(strings.Split(g.glob, "/"), strings.Split(fromStart, "/"))
}

// matchSegments matches path segments against glob segments, where a "**"
// segment matches any number of path segments.
func matchSegments(glob, segs []string) bool {
	for len(glob) > 0 {
		if glob[0] == "**" {
			for i := range len(segs) + 1 {
				if matchSegments(glob[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(glob[0], segs[0]); !ok {
			return false
		}
		glob, segs = glob[1:], segs[1:]
	}
	return len(segs) == 0
}

// file searches one open file, shown as rel; only cancellation stops the
// walk.
func (g *grepRun) file(f *os.File, rel string) error {
	g.br.Reset(ctxReader{g.ctx, f})
	head, err := g.br.Peek(watch.SniffLen)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return g.readErr(err)
	}
	if watch.IsBinary(head, len(head) < watch.SniffLen) {
		g.binary++
		return nil
	}
	shown := false
	for lineNo := 1; ; lineNo++ {
		line, n, err := readLine(g.br, g.buf, maxGrepLineBytes)
		g.buf = line[:0]
		if n == 0 {
			return g.readErr(err)
		}
		text := trimEOL(line)
		if g.re.Match(text) {
			g.matches++
			if g.matches <= maxGrepMatches {
				g.entry = append(g.entry[:0], g.ts.at.show(rel)...)
				g.entry = append(g.entry, ':')
				g.entry = strconv.AppendInt(g.entry, int64(lineNo), 10)
				g.entry = append(g.entry, ':')
				g.entry = appendDisplayLine(g.entry, text, maxGrepLineRunes, n > len(line))
				g.entry = append(g.entry, '\n')
				g.out.Write(g.entry)
				if !shown {
					g.files = append(g.files, rel)
					shown = true
				}
			}
		}
		if err != nil {
			return g.readErr(err)
		}
	}
}

// readErr decides what a read error means for the walk: cancellation stops
// it; anything else ends only the current file.
func (g *grepRun) readErr(err error) error {
	switch {
	case err == io.EOF:
		return nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err // ctxReader's: the context is cancelled, no need to ask again
	}
	return g.ctx.Err()
}
