package workspace

import (
	"bufio"
	"bytes"
	"io"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// DefaultIgnore is the ignore list a Watcher uses when WatchOptions.Ignore
// is nil: dependency trees, build outputs, caches and editor droppings that
// no model needs to hear about. The patterns use .gitignore syntax and apply
// in every directory, below every .gitignore in the tree, so a project can
// re-include one with a "!" rule (e.g. "!build/").
var DefaultIgnore = []string{
	// dependencies and virtual environments
	"node_modules/", "bower_components/", ".venv/", "venv/", ".tox/", ".terraform/",
	// build outputs
	"dist/", "build/", "target/", "out/", ".next/", ".nuxt/", ".svelte-kit/", ".gradle/", ".turbo/", "zig-cache/", ".zig-cache/",
	// caches
	"__pycache__/", "*.pyc", ".mypy_cache/", ".pytest_cache/", ".ruff_cache/", ".cache/", ".parcel-cache/",
	// editors and the OS
	".idea/", "*.swp", "*.swx", "*~", ".#*", "4913", ".DS_Store",
}

// alwaysIgnored names what every Watcher ignores whatever its options say:
// the repository itself, and the temporary files hearth's own writes go
// through (writeAtomic's .hearth-*.tmp, renamed over their target).
func alwaysIgnored(name string) bool {
	return name == ".git" || (strings.HasPrefix(name, ".hearth-") && strings.HasSuffix(name, ".tmp"))
}

// ignoreRule is one parsed .gitignore line (or default pattern), kept until
// its file changes.
type ignoreRule struct {
	p     gitignore.Pattern // go-git's matcher, with the .gitignore's directory as its domain
	depth int               // components in that directory
	base  bool              // no slash but a trailing one: git matches the name alone
}

func newIgnoreRule(line, dir string) ignoreRule {
	var domain []string
	if dir != "" {
		domain = strings.Split(dir, "/")
	}
	body := strings.TrimSuffix(strings.TrimPrefix(line, "!"), "/")
	return ignoreRule{p: gitignore.ParsePattern(line, domain), depth: len(domain), base: !strings.Contains(body, "/")}
}

// ignorer decides which paths of one workspace a Watcher ignores: the
// built-in names, every .gitignore in the tree (each applying below its own
// directory, deeper ones and later lines first, with go-git's matcher), then
// the default list. Created by newIgnorer; owned by the watcher's loop
// goroutine, not safe for concurrent use.
type ignorer struct {
	root     *Root                   // the workspace; .gitignore files are read through its handle
	skip     string                  // a path always ignored (the Watcher's marker directory, if inside the root)
	names    map[string]bool         // default rules that are plain names (no glob, no "!"): name → directories only
	defaults []ignoreRule            // the other default rules, lowest priority, in order
	rules    map[string][]ignoreRule // directory (slash-separated, "" for the root) → its .gitignore, in file order
	raw      map[string]string       // directory → its .gitignore's bytes, to tell a real change
	chain    map[string][]ignoreRule // cache: directory → the rules that apply to its entries, highest priority last
	scratch  [2][]string             // reused by ignored: the path's components, a shortened path
}

func newIgnorer(root *Root, defaults []string) *ignorer {
	ig := &ignorer{root: root, names: map[string]bool{}, rules: map[string][]ignoreRule{}, raw: map[string]string{}, chain: map[string][]ignoreRule{}}
	for _, p := range defaults {
		p = strings.TrimSpace(p)
		name := strings.TrimSuffix(p, "/")
		switch {
		case p == "" || strings.HasPrefix(p, "#"):
		case !strings.ContainsAny(name, `*?[\/!`):
			ig.names[name] = strings.HasSuffix(p, "/")
		default:
			ig.defaults = append(ig.defaults, newIgnoreRule(p, ""))
		}
	}
	return ig
}

// load (re)reads the .gitignore of dir, a slash-separated directory
// relative to the root. A missing or unreadable file clears the directory's
// rules. It reports whether the rules changed.
func (ig *ignorer) load(dir string) bool {
	data, err := ig.root.readGitignore(filepath.Join(filepath.FromSlash(dir), ".gitignore"))
	if err != nil {
		data = nil
	}
	if old, had := ig.raw[dir]; had == (len(data) > 0) && old == string(data) {
		return false
	}
	if rs := parseGitignore(data, dir); len(rs) > 0 {
		ig.rules[dir], ig.raw[dir] = rs, string(data)
	} else if len(data) > 0 {
		delete(ig.rules, dir)
		ig.raw[dir] = string(data) // comments only
	} else {
		delete(ig.rules, dir)
		delete(ig.raw, dir)
	}
	clear(ig.chain)
	return true
}

// forget drops the rules of dir, a directory that is gone or now ignored.
func (ig *ignorer) forget(dir string) {
	delete(ig.chain, dir)
	if _, ok := ig.raw[dir]; ok {
		delete(ig.rules, dir)
		delete(ig.raw, dir)
		clear(ig.chain)
	}
}

// readGitignore reads the .gitignore named name through the root's handle,
// as a regular file only (a FIFO by that name must not block the walk).
func (r *Root) readGitignore(name string) ([]byte, error) {
	f, _, err := r.openRegular(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// parseGitignore parses a .gitignore's lines for the directory dir, the way
// git reads them: blank lines and # comments skipped, CRLF tolerated.
func parseGitignore(data []byte, dir string) []ignoreRule {
	var rs []ignoreRule
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		rs = append(rs, newIgnoreRule(line, dir))
	}
	return rs
}

// ignored reports whether rel (slash-separated, relative to the root, not
// the root itself) is ignored. The caller has already found that rel's
// parent directory is not: like git, nothing below an ignored directory is
// looked at (so a "!" rule cannot re-include a file inside one), which is
// also why a rule without a slash need only be matched against the name.
func (ig *ignorer) ignored(rel string, isDir bool) bool {
	parent, name := splitRel(rel)
	if alwaysIgnored(name) || rel == ig.skip {
		return true
	}
	rules := ig.rulesFor(parent)
	if len(rules) == 0 && len(ig.defaults) == 0 {
		dirOnly, ok := ig.names[name]
		return ok && (isDir || !dirOnly)
	}
	path := splitInto(ig.scratch[0][:0], rel)
	ig.scratch[0] = path
	match := func(r ignoreRule) gitignore.MatchResult {
		if !r.base || r.depth == len(path)-1 {
			return r.p.Match(path, isDir)
		}
		short := append(append(ig.scratch[1][:0], path[:r.depth]...), name)
		ig.scratch[1] = short
		return r.p.Match(short, isDir)
	}
	for i := len(rules) - 1; i >= 0; i-- {
		if m := match(rules[i]); m != gitignore.NoMatch {
			return m == gitignore.Exclude
		}
	}
	for i := len(ig.defaults) - 1; i >= 0; i-- {
		if m := match(ig.defaults[i]); m != gitignore.NoMatch {
			return m == gitignore.Exclude
		}
	}
	dirOnly, ok := ig.names[name]
	return ok && (isDir || !dirOnly)
}

// rulesFor returns the .gitignore rules that apply to the entries of dir:
// its own and its ancestors', the root's first and dir's last (highest
// priority). The result is cached until a .gitignore changes.
func (ig *ignorer) rulesFor(dir string) []ignoreRule {
	if len(ig.rules) == 0 {
		return nil
	}
	if rs, ok := ig.chain[dir]; ok {
		return rs
	}
	var rs []ignoreRule
	if dir != "" {
		parent, _ := splitRel(dir)
		rs = ig.rulesFor(parent)
	}
	if own := ig.rules[dir]; len(own) > 0 {
		rs = append(rs[:len(rs):len(rs)], own...) // never append into a parent's cached slice
	}
	ig.chain[dir] = rs
	return rs
}

// splitInto splits the slash-separated rel into dst, reusing its storage.
func splitInto(dst []string, rel string) []string {
	for {
		i := strings.IndexByte(rel, '/')
		if i < 0 {
			return append(dst, rel)
		}
		dst = append(dst, rel[:i])
		rel = rel[i+1:]
	}
}
