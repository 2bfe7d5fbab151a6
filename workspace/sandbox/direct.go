package sandbox

import (
	"path/filepath"
	"slices"
	"strings"
)

// A command line that is one program and literal words — `cat notes.txt`,
// `go test ./...` is not (a glob), `rg -n "func main" cmd` is — needs no
// shell: /bin/sh would only look the program up in PATH, fork and wait.
// Starting the program directly saves that exec and that fork, the larger
// part of a short command's cost on a machine where each is milliseconds.
// directCommand recognises such lines conservatively; everything else,
// and anything it is unsure of, goes to /bin/sh -c as before.

// program is what a call execs: the program's path, its argv (argv[0]
// the word as written, as the shell passes it) and its environment.
type program struct {
	path string
	argv []string
	env  []string
}

// shellProgram runs line with /bin/sh -c, the program for any line
// directCommand does not take.
func shellProgram(line string, env []string) program {
	return program{path: "/bin/sh", argv: []string{"/bin/sh", "-c", line}, env: env}
}

// commandProgram is what runs line in dir: the program itself when the
// line needs no shell, else /bin/sh -c line.
func commandProgram(line, dir string, env []string) program {
	if p, ok := directCommand(line, dir, env); ok {
		return p
	}
	return shellProgram(line, env)
}

// shellWords are the first words the shell gives a meaning of its own:
// dash's builtins (echo and printf among them: their options and escapes
// differ from /bin/echo's) and its reserved words.
var shellWords = strings.Fields(`alias bg break cd command continue echo eval exec exit export false fc fg
	getopts hash jobs kill local printf pwd read readonly return set shift test [ times trap true type
	ulimit umask unalias unset wait if then else elif fi case esac for while until do done in ! { } time`)

// directCommand returns how to run line in dir without a shell, or false.
func directCommand(line, dir string, env []string) (program, bool) {
	words, ok := literalWords(line)
	if !ok || len(words) == 0 || strings.ContainsAny(words[0].raw, `'"=`) || slices.Contains(shellWords, words[0].text) {
		return program{}, false
	}
	path, ok := lookProgram(words[0].text, dir, env)
	if !ok {
		return program{}, false
	}
	argv := make([]string, len(words))
	for i, w := range words {
		argv[i] = w.text
	}
	return program{path: path, argv: argv, env: withPWD(env, dir)}, true
}

// word is one word of a line: its text after quote removal and the bytes
// it took.
type word struct{ text, raw string }

// literalWords splits line into words when every word is literal to the
// shell: plain characters that expand to nothing, single-quoted text, and
// double-quoted text with no $, ` or \. Anything else (an operator, a
// redirection, a glob, a tilde, a variable, a comment, a newline) is false.
func literalWords(line string) ([]word, bool) {
	var words []word
	for i := 0; i < len(line); {
		if line[i] == ' ' || line[i] == '\t' {
			i++
			continue
		}
		start := i
		var b strings.Builder
		for i < len(line) && line[i] != ' ' && line[i] != '\t' {
			switch c := line[i]; {
			case c == '\'' || c == '"':
				end := strings.IndexByte(line[i+1:], c)
				if end < 0 {
					return nil, false
				}
				inner := line[i+1 : i+1+end]
				if c == '"' && strings.ContainsAny(inner, "$`\\") {
					return nil, false
				}
				b.WriteString(inner)
				i += end + 2
			case plainByte(c):
				b.WriteByte(c)
				i++
			default:
				return nil, false
			}
		}
		words = append(words, word{text: b.String(), raw: line[start:i]})
	}
	return words, true
}

// plainByte reports whether c stands for itself unquoted anywhere in a
// word (so not # ~ = at a word's start either: = only matters in the
// first word, checked apart).
func plainByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c >= 0x80:
		return true
	}
	return strings.IndexByte("-_./,:+@%=", c) >= 0
}

// lookProgram finds name as the shell would: a path when it has a slash
// (relative to dir), else the first executable regular file in PATH's
// directories. It refuses what the shell might run otherwise: a PATH
// with an empty or relative entry, a file that is neither a binary nor a
// #! script (the shell would run it as a script).
func lookProgram(name, dir string, env []string) (string, bool) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		return p, runnable(p)
	}
	pathVar := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" // dash's default
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	return programs.look(name, pathVar, func() (string, bool) { return lookPath(name, pathVar) })
}

// lookPath is lookProgram's search of PATH.
func lookPath(name, pathVar string) (string, bool) {
	for _, d := range strings.Split(pathVar, ":") {
		if !filepath.IsAbs(d) {
			return "", false
		}
		p := filepath.Join(d, name)
		if executableFile(p) {
			return p, startsRunnable(p)
		}
	}
	return "", false
}

// runnable reports whether p is an executable the kernel runs itself: an
// ELF binary or a #! script.
func runnable(p string) bool { return executableFile(p) && startsRunnable(p) }

// withPWD is env with PWD set to dir, as the shell exports it.
func withPWD(env []string, dir string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PWD=") {
			out = append(out, kv)
		}
	}
	return append(out, "PWD="+dir)
}
