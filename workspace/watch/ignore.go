package watch

import (
	"bufio"
	"bytes"
	"io"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// DefaultIgnore is the ignore list a Watcher uses when Options.Ignore
// is nil: files no repository tracks and no model needs to hear about —
// editors' swap and backup files, the OS's droppings. It names no
// directory: whether build/, dist/ or node_modules/ is an output to ignore
// or source to watch is the repository's to say (its .gitignore files,
// .git/info/exclude, the user's global excludes file), and kubernetes'
// build/, for one, is source. The patterns use .gitignore syntax and apply
// in every directory, below every rule of the repository's.
var DefaultIgnore = []string{"*.swp", "*.swx", "*~", ".#*", "4913", ".DS_Store"}

// SearchIgnore is what grep skips besides what the repository ignores:
// dependency trees, build outputs and caches, where a search of the
// project's own text rarely wants to look (a model that does names the
// directory). A project re-includes one with a "!" rule (e.g. "!build/").
var SearchIgnore = []string{
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

// newIgnoreRule parses line for a .gitignore in domain: its directory's
// path components below the repository's top.
func newIgnoreRule(line string, domain []string) ignoreRule {
	body := strings.TrimSuffix(strings.TrimPrefix(line, "!"), "/")
	return ignoreRule{p: gitignore.ParsePattern(line, domain), depth: len(domain), base: !strings.Contains(body, "/")}
}

// Ignorer decides which paths of one workspace a Watcher (or grep) ignores,
// as git would: the built-in names, every .gitignore in the tree (each
// applying below its own directory, deeper ones and later lines first, with
// go-git's matcher), then the repository's rules from outside the tree
// (loadRepoRules: the .gitignore files above a root that is a subdirectory,
// .git/info/exclude, the global excludes file), then the default list.
// Paths are matched relative to the repository's top. Created by
// NewIgnorer; owned by the watcher's loop goroutine (or one grep), not safe
// for concurrent use.
type Ignorer struct {
	root     Dir                     // the workspace; .gitignore files are read through its handle
	skip     string                  // a path always ignored (the Watcher's marker directory, if inside the root)
	prefix   []string                // the root's path below the repository's top; nil at the top or outside a repository
	outer    []ignoreRule            // the repository's rules from outside the tree, lowest priority first
	names    map[string]bool         // default rules that are plain names (no glob, no "!"): name → directories only
	defaults []ignoreRule            // the other default rules, lowest priority, in order
	rules    map[string][]ignoreRule // directory (slash-separated, "" for the root) → its .gitignore, in file order
	raw      map[string]string       // directory → its .gitignore's bytes, to tell a real change
	chain    map[string][]ignoreRule // cache: directory → the rules that apply to its entries, highest priority last
	scratch  [2][]string             // reused by ignored: the path's components, a shortened path
}

// NewIgnorer reads the repository's rules from outside the tree (the
// user's git configuration among them: $HOME and $XDG_CONFIG_HOME as they
// are now); the tree's .gitignore files are read by load as the walk
// enters their directories.
func NewIgnorer(root Dir, defaults []string) *Ignorer {
	ig := &Ignorer{root: root, names: map[string]bool{}, rules: map[string][]ignoreRule{}, raw: map[string]string{}, chain: map[string][]ignoreRule{}}
	ig.prefix, ig.outer = loadRepoRules(root.Path())
	for _, p := range defaults {
		p = strings.TrimSpace(p)
		name := strings.TrimSuffix(p, "/")
		switch {
		case p == "" || strings.HasPrefix(p, "#"):
		case !strings.ContainsAny(name, `*?[\/!`):
			ig.names[name] = strings.HasSuffix(p, "/")
		default:
			ig.defaults = append(ig.defaults, newIgnoreRule(p, ig.prefix))
		}
	}
	return ig
}

// load (re)reads the .gitignore of dir, a slash-separated directory
// relative to the root. A missing or unreadable file clears the directory's
// rules. It reports whether the rules changed.
func (ig *Ignorer) Load(dir string) bool {
	data, err := readGitignore(ig.root, filepath.Join(filepath.FromSlash(dir), ".gitignore"))
	if err != nil {
		data = nil
	}
	if old, had := ig.raw[dir]; had == (len(data) > 0) && old == string(data) {
		return false
	}
	domain := ig.prefix[:len(ig.prefix):len(ig.prefix)]
	if dir != "" {
		domain = append(domain, strings.Split(dir, "/")...)
	}
	if rs := parseGitignore(data, domain); len(rs) > 0 {
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
func (ig *Ignorer) forget(dir string) {
	delete(ig.chain, dir)
	if _, ok := ig.raw[dir]; ok {
		delete(ig.rules, dir)
		delete(ig.raw, dir)
		clear(ig.chain)
	}
}

// readGitignore reads the .gitignore named name through the root's handle,
// as a regular file only (a FIFO by that name must not block the walk).
func readGitignore(d Dir, name string) ([]byte, error) {
	f, _, err := d.OpenRegular(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// parseGitignore parses a .gitignore's lines for the directory domain (see
// newIgnoreRule), the way git reads them: blank lines and # comments
// skipped, CRLF tolerated.
func parseGitignore(data []byte, domain []string) []ignoreRule {
	var rs []ignoreRule
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		rs = append(rs, newIgnoreRule(line, domain))
	}
	return rs
}

// ignored reports whether rel (slash-separated, relative to the root, not
// the root itself) is ignored. The caller has already found that rel's
// parent directory is not: like git, nothing below an ignored directory is
// looked at (so a "!" rule cannot re-include a file inside one), which is
// also why a rule without a slash need only be matched against the name.
func (ig *Ignorer) Ignored(rel string, isDir bool) bool {
	parent, name := splitRel(rel)
	if alwaysIgnored(name) || rel == ig.skip {
		return true
	}
	rules := ig.rulesFor(parent)
	if len(rules) == 0 && len(ig.defaults) == 0 {
		dirOnly, ok := ig.names[name]
		return ok && (isDir || !dirOnly)
	}
	path := splitInto(append(ig.scratch[0][:0], ig.prefix...), rel)
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

// rulesFor returns the repository's rules that apply to the entries of
// dir: those from outside the tree, then the .gitignore files of dir and
// its ancestors, the root's first and dir's last (highest priority). The
// result is cached until a .gitignore changes.
func (ig *Ignorer) rulesFor(dir string) []ignoreRule {
	if len(ig.rules) == 0 {
		return ig.outer
	}
	if rs, ok := ig.chain[dir]; ok {
		return rs
	}
	rs := ig.outer[:len(ig.outer):len(ig.outer)]
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
