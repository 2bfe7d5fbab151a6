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
	"strconv"
	"strings"
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
			`"path":{"type":"string","description":"File or directory to search, relative to the workspace root. Default: the root."},` +
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
	re      *regexp.Regexp
	glob    string
	start   string // absolute directory the walk starts at
	out     strings.Builder
	matches int      // all matching lines, shown or not
	binary  int      // binary files skipped
	files   []string // files with shown matches, in walk order
	ignore  *ignorer // .gitignore rules and the default list, loaded as the walk enters directories
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
	g := &grepRun{ctx: ctx, root: ts.root, re: re}
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
	abs, err := ts.root.Resolve(p)
	if err != nil {
		return errorResult(err.Error())
	}
	rel := ts.root.Rel(abs)
	title := fmt.Sprintf("Grep %q in %s", *a.Pattern, rel)

	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Result{IsError: true, Title: title, Output: fmt.Sprintf("%q does not exist; use list_dir to find the right path, or leave path out to search the whole workspace", rel)}
	case err != nil:
		return Result{IsError: true, Title: title, Output: fmt.Sprintf("cannot search %q: %v", rel, unwrapPathErr(err))}
	case !fi.IsDir() && !fi.Mode().IsRegular():
		return Result{IsError: true, Title: title, Output: fmt.Sprintf("%q is not a regular file (%v); give a directory or a text file", rel, fi.Mode().Type())}
	}
	g.br = bufio.NewReaderSize(nil, 64<<10)
	if fi.IsDir() {
		g.start = abs
		g.ignore = newIgnorer(ts.root.Path(), DefaultIgnore)
		// The rules of the start directory's ancestors apply too.
		dir := ""
		g.ignore.load(dir)
		if rel != "." {
			for _, part := range strings.Split(rel, "/") {
				dir = path.Join(dir, part)
				g.ignore.load(dir)
			}
		}
		err = filepath.WalkDir(abs, g.visit)
	} else {
		// An explicitly named file is searched whatever the glob says.
		err = g.file(abs, rel)
	}
	if ctx.Err() != nil {
		return Result{IsError: true, Title: title, Output: cancelledResult("grep").Output}
	}
	if err != nil {
		return Result{IsError: true, Title: title, Output: fmt.Sprintf("cannot search %q: %v", rel, unwrapPathErr(err))}
	}
	if g.matches == 0 && !fi.IsDir() && g.binary > 0 {
		return Result{Title: title, Output: fmt.Sprintf("%s is a binary file; grep searches text files only", rel)}
	}
	if g.matches == 0 {
		return Result{Title: title, Output: fmt.Sprintf("no matches for %q in %s", *a.Pattern, rel)}
	}
	if more := g.matches - maxGrepMatches; more > 0 {
		fmt.Fprintf(&g.out, "[and %d more matches; narrow the pattern, path or glob]\n", more)
	}
	return Result{Title: title, Output: g.out.String(), Locations: g.files}
}

// visit is the filepath.WalkDir callback. WalkDir does not follow symlinks,
// so symlinked directories are never descended; symlinked files are searched
// only when they resolve inside the root.
func (g *grepRun) visit(p string, d fs.DirEntry, err error) error {
	if cerr := g.ctx.Err(); cerr != nil {
		return cerr
	}
	if err != nil {
		if p == g.start {
			return err
		}
		// An unreadable entry deep in the tree should not sink the search.
		if d != nil && d.IsDir() {
			return fs.SkipDir
		}
		return nil
	}
	if d.IsDir() {
		if p == g.start {
			return nil
		}
		rel := g.root.Rel(p)
		if skippedDirs[d.Name()] || g.ignore.ignored(rel, true) {
			return fs.SkipDir
		}
		g.ignore.load(rel)
		return nil
	}
	if g.ignore.ignored(g.root.Rel(p), false) {
		return nil
	}
	target := p
	switch {
	case d.Type()&fs.ModeSymlink != 0:
		resolved, err := g.root.Resolve(p)
		if err != nil {
			return nil
		}
		fi, err := os.Stat(resolved)
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		target = resolved
	case !d.Type().IsRegular():
		return nil
	}
	rel := g.root.Rel(p)
	if g.glob != "" && !g.globMatches(p, rel) {
		return nil
	}
	return g.file(target, rel)
}

// globMatches matches a glob without "/" against the base name, and one with
// "/" against the path relative to the root or to the searched directory.
func (g *grepRun) globMatches(abs, rel string) bool {
	if !strings.Contains(g.glob, "/") {
		ok, _ := path.Match(g.glob, path.Base(rel))
		return ok
	}
	if matchSegments(strings.Split(g.glob, "/"), strings.Split(rel, "/")) {
		return true
	}
	fromStart, err := filepath.Rel(g.start, abs)
	return err == nil && matchSegments(strings.Split(g.glob, "/"), strings.Split(filepath.ToSlash(fromStart), "/"))
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

// file searches one file, shown as rel. Files that cannot be opened are
// skipped; only cancellation stops the walk.
func (g *grepRun) file(abs, rel string) error {
	f, err := os.Open(abs)
	if err != nil {
		return nil
	}
	defer f.Close()
	g.br.Reset(ctxReader{g.ctx, f})
	head, _ := g.br.Peek(sniffLen)
	if isBinary(head, len(head) < sniffLen) {
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
				g.entry = append(g.entry[:0], rel...)
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
	if err == io.EOF {
		return nil
	}
	return g.ctx.Err()
}
