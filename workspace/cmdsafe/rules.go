package cmdsafe

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// A rule is a command prefix a user allowed always: words a simple
// command's first words must equal ("go test", "npm run lint"). Rules are
// passed around as their words joined by single spaces; no word of a
// prefix holds a blank.

// Prefix is the rule "always allow" of the simple command args makes: the
// program and the subcommand-like words after it (at most one, two where
// the second only names what runs: npm run SCRIPT, go mod tidy). ok is
// false for a program that runs whatever its arguments say (a shell, an
// interpreter, env, sudo, xargs): no prefix of it is safe to allow, but
// `python3 -m MODULE`.
func Prefix(args []string) (prefix string, ok bool) {
	if len(args) == 0 || !programWord.MatchString(args[0]) {
		return "", false
	}
	prog := args[0]
	base := path.Base(prog)
	if interpreters[base] {
		if len(args) >= 3 && args[1] == "-m" && subcommand.MatchString(args[2]) {
			return prog + " -m " + args[2], true
		}
		return "", false
	}
	if runsAnything[base] {
		return "", false
	}
	words := []string{prog}
	if len(args) > 1 && subcommand.MatchString(args[1]) {
		words = append(words, args[1])
	}
	switch {
	case len(words) == 1 && needsWhat[base]:
		return "", false // npx alone: any package
	case len(words) == 2 && runsNamed[base+" "+words[1]]:
		if len(args) < 3 || !subcommand.MatchString(args[2]) {
			return "", false // npm run alone: any script
		}
		words = append(words, args[2])
	}
	return strings.Join(words, " "), true
}

// programWord is a program as a rule may name it: a name or a path, no
// blank, nothing a shell would expand.
var programWord = regexp.MustCompile(`^[A-Za-z0-9_./+-]+$`)

// subcommand is a word that names a subcommand, script or module: no
// option, path or value.
var subcommand = regexp.MustCompile(`^[a-z0-9][a-z0-9_:.-]*$`)

// interpreters run a script or program their arguments name.
var interpreters = map[string]bool{"python": true, "python2": true, "python3": true}

// runsAnything are programs that run any command they are given, shells
// and interpreters included: never the start of a rule.
var runsAnything = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true, "csh": true, "tcsh": true,
	"node": true, "nodejs": true, "deno": true, "ruby": true, "perl": true, "php": true, "lua": true,
	"env": true, "sudo": true, "doas": true, "su": true, "runuser": true, "pkexec": true, "xargs": true,
	"nohup": true, "nice": true, "ionice": true, "timeout": true, "time": true, "exec": true, "eval": true,
	"command": true, "builtin": true, "busybox": true, "watch": true, "strace": true, "ltrace": true,
	"chroot": true, "unshare": true, "nsenter": true, "setsid": true, "stdbuf": true, "flock": true,
	"script": true, "ssh": true, "source": true, ".": true, "awk": true, "gawk": true, "osascript": true,
	"parallel": true, "entr": true, "firejail": true, "systemd-run": true, "open": true, "xdg-open": true,
}

// needsWhat are runners whose next word is what they run.
var needsWhat = map[string]bool{"npx": true, "bunx": true, "pnpx": true, "uvx": true, "pipx": true}

// runsNamed are program + subcommand pairs whose next word names what
// runs: the rule takes it too.
var runsNamed = map[string]bool{
	"npm run": true, "npm exec": true, "pnpm run": true, "pnpm exec": true, "yarn run": true,
	"bun run": true, "uv run": true, "poetry run": true, "pipenv run": true, "bundle exec": true,
	"go mod": true, "go tool": true, "docker compose": true, "pipx run": true,
}

// RulePrefixes are the rules "always allow" of line makes: one per simple
// command that is not read-only (read-only ones need none), without
// duplicates. ok is false when line is not understood, or a command of it
// has no safe prefix (Prefix): then no rule is offered.
func RulePrefixes(line string) (prefixes []string, ok bool) {
	cmds, err := Parse(line)
	if err != nil {
		return nil, false
	}
	for _, c := range cmds {
		if readOnlySimple(c) {
			continue
		}
		p, ok := Prefix(c.texts())
		if !ok {
			return nil, false
		}
		if !slices.Contains(prefixes, p) {
			prefixes = append(prefixes, p)
		}
	}
	return prefixes, len(prefixes) > 0
}

// Covered reports whether rules (prefixes as RulePrefixes gives them)
// allow line: it is understood, and each of its simple commands is
// read-only or starts with a rule's words. A glob among those words
// never matches.
func Covered(line string, rules []string) bool {
	if len(rules) == 0 {
		return false
	}
	cmds, err := Parse(line)
	if err != nil || len(cmds) == 0 {
		return false
	}
	for _, c := range cmds {
		if !readOnlySimple(c) && !matchesAny(c, rules) {
			return false
		}
	}
	return true
}

func matchesAny(c Simple, rules []string) bool {
	for _, r := range rules {
		words := strings.Split(r, " ")
		if len(c.Args) < len(words) {
			continue
		}
		match := true
		for i, w := range words {
			if c.Args[i].Glob || c.Args[i].Text != w {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}
