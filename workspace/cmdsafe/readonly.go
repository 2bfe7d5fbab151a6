package cmdsafe

import "strings"

// ReadOnly reports whether line only reads: it parses (Parse), and each of
// its simple commands runs a program of the allowlist with no argument that
// makes it write or run another program.
func ReadOnly(line string) bool {
	cmds, err := Parse(line)
	if err != nil || len(cmds) == 0 {
		return false
	}
	for _, c := range cmds {
		if !readOnlySimple(c) {
			return false
		}
	}
	return true
}

func readOnlySimple(c Simple) bool {
	p, ok := readOnlyPrograms[c.Program()]
	if !ok || c.Args[0].Glob {
		return false
	}
	args := c.Args[1:]
	if !p.globs {
		for _, a := range args {
			if a.Glob {
				return false // a file name could be one of its writing flags
			}
		}
	}
	return p.check == nil || p.check(args)
}

// program is how one allowlisted program stays read-only.
type program struct {
	// globs: no argument of it writes or runs anything, so file names
	// the shell puts in its arguments cannot make it.
	globs bool
	// check says whether these arguments keep it read-only; nil: any do.
	check func(args []Word) bool
}

var anyArgs = program{globs: true}

// readOnlyPrograms is the allowlist. Programs that read files and write
// only their output; each with the flags that would change that refused.
var readOnlyPrograms = map[string]program{
	"ls": anyArgs, "cat": anyArgs, "head": anyArgs, "tail": anyArgs, "wc": anyArgs, "pwd": anyArgs,
	"echo": anyArgs, "printf": anyArgs, "true": anyArgs, "false": anyArgs, "stat": anyArgs, "du": anyArgs,
	"df": anyArgs, "which": anyArgs, "basename": anyArgs, "dirname": anyArgs, "realpath": anyArgs,
	"readlink": anyArgs, "nl": anyArgs, "cut": anyArgs, "tr": anyArgs, "cmp": anyArgs, "comm": anyArgs,
	"diff": anyArgs, "grep": anyArgs, "egrep": anyArgs, "fgrep": anyArgs, "md5sum": anyArgs,
	"sha1sum": anyArgs, "sha256sum": anyArgs, "sha512sum": anyArgs, "od": anyArgs, "hexdump": anyArgs,
	"uname": anyArgs, "whoami": anyArgs, "id": anyArgs, "column": anyArgs, "jq": anyArgs, "printenv": anyArgs,

	"cd":       {check: func(a []Word) bool { return len(a) <= 1 }},
	"hostname": {check: func(a []Word) bool { return len(a) == 0 }},
	"file":     {check: refuse("C", "compile")},
	"sort":     {check: refuse("oT", "output", "temporary-directory", "compress-program")},
	"uniq":     {check: func(a []Word) bool { return operands(a) <= 1 }}, // a second operand is its output file
	"tree":     {check: refusePrefix("-o", "-R")},
	"date":     {check: dateReadOnly},
	"find":     {check: refusePrefix("-exec", "-ok", "-delete", "-fprint", "-fls")},
	"rg":       {check: refusePrefix("--pre", "--hostname-bin")},
	"fd":       {check: refuse("xX", "exec", "exec-batch")},
	"sed":      {check: sedReadOnly},
	"git":      {check: gitReadOnly},
}

// refuse refuses a short option cluster holding any of letters, and a
// long option that is, or abbreviates (as GNU getopt_long accepts), any of
// names.
func refuse(letters string, names ...string) func([]Word) bool {
	return func(args []Word) bool {
		for _, a := range args {
			if shortHas(a.Text, letters) || longIs(a.Text, names...) {
				return false
			}
		}
		return true
	}
}

// refusePrefix refuses any argument that starts with one of prefixes.
func refusePrefix(prefixes ...string) func([]Word) bool {
	return func(args []Word) bool {
		for _, a := range args {
			for _, p := range prefixes {
				if strings.HasPrefix(a.Text, p) {
					return false
				}
			}
		}
		return true
	}
}

// shortHas: a is a cluster of short options (-abc) holding one of letters.
func shortHas(a, letters string) bool {
	if len(a) < 2 || a[0] != '-' || a[1] == '-' {
		return false
	}
	return strings.ContainsAny(a[1:], letters)
}

// longIs: a is --NAME or --NAME=VALUE where NAME is one of names or a
// prefix of one.
func longIs(a string, names ...string) bool {
	if !strings.HasPrefix(a, "--") || len(a) == 2 {
		return false
	}
	name, _, _ := strings.Cut(a[2:], "=")
	for _, n := range names {
		if strings.HasPrefix(n, name) {
			return true
		}
	}
	return false
}

// operands counts the arguments that are not options.
func operands(args []Word) int {
	n := 0
	for _, a := range args {
		if !strings.HasPrefix(a.Text, "-") || a.Text == "-" {
			n++
		}
	}
	return n
}

// dateReadOnly: date prints; with -s, --set or an operand that is not a
// +FORMAT it sets the clock.
func dateReadOnly(args []Word) bool {
	for _, a := range args {
		t := a.Text
		switch {
		case shortHas(t, "s"), longIs(t, "set"):
			return false
		case !strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "+"):
			return false
		}
	}
	return true
}
