package patch

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Models trained on the apply_patch format often run it through the shell,
// where no such program exists: `apply_patch <<'EOF' … EOF`, `apply_patch
// '*** Begin Patch …'`, sometimes after `cd DIR &&`, or as an argv array
// ["apply_patch", "…"]. The shell tool recognises a command that is exactly
// such an invocation and applies the patch itself, as apply_patch would,
// instead of running anything: FromShell reads the command the way sh
// would read these few forms, and nothing else. Variables are not expanded:
// the text is taken as written, which is what the model means.

// Invocation is an apply_patch invocation read from a shell command.
// A plain value for one call.
type Invocation struct {
	Dir  string // the directory a leading `cd DIR &&` moves to; "" for none
	Text string // the patch
}

// FromShell reads command as an apply_patch invocation. isPatch says its
// first word (after an optional `cd DIR &&`) is apply_patch; msg, when not
// empty, says why it is not one hearth can apply, for the model.
func FromShell(command string) (inv Invocation, isPatch bool, msg string) {
	rest := strings.TrimSpace(command)
	if dir, after, ok := cutCd(rest); ok {
		inv.Dir, rest = dir, after
	}
	after, ok := strings.CutPrefix(rest, "apply_patch")
	if !ok || (after != "" && !strings.ContainsRune(" \t\n<'\"$", rune(after[0]))) {
		return Invocation{}, false, ""
	}
	rest = strings.TrimLeft(after, " \t")
	const usage = "apply_patch <<'EOF', then the patch, then a line EOF"
	var text string
	switch {
	case strings.HasPrefix(rest, "<<"):
		if text, rest, ok = readHeredoc(rest); !ok {
			return inv, true, "cannot read the apply_patch command: the heredoc's first line must be just " + usage
		}
	case rest == "" || rest[0] == '\n':
		return inv, true, "apply_patch run through shell needs the patch, as one quoted argument or a heredoc: " + usage
	default:
		if text, rest, ok = readWord(rest); !ok {
			return inv, true, "cannot read the apply_patch command: a quote is not closed; pass the patch in a heredoc: " + usage
		}
	}
	if strings.TrimSpace(rest) != "" {
		return inv, true, fmt.Sprintf("apply_patch run through shell must be the whole command (nothing is run in the shell); got %q after the patch. Run other commands in a separate shell call", clipLine(strings.TrimSpace(rest)))
	}
	inv.Text = text
	return inv, true, ""
}

// cutCd cuts a leading `cd DIR &&` from command.
func cutCd(command string) (dir, rest string, ok bool) {
	after, found := strings.CutPrefix(command, "cd")
	if !found || after == "" || (after[0] != ' ' && after[0] != '\t') {
		return "", command, false
	}
	dir, after, ok = readWord(strings.TrimLeft(after, " \t"))
	if !ok || dir == "" || strings.HasPrefix(dir, "~") {
		return "", command, false
	}
	after, found = strings.CutPrefix(strings.TrimLeft(after, " \t"), "&&")
	if !found {
		return "", command, false
	}
	return dir, strings.TrimLeft(after, " \t\n"), true
}

// readHeredoc reads `<<DELIM` (DELIM bare, 'quoted' or "quoted"; `<<-`
// strips leading tabs) and the lines after it up to a line holding just
// DELIM, or to the end, as sh does when the delimiter is missing. rest is
// what follows the delimiter's line.
func readHeredoc(s string) (body, rest string, ok bool) {
	s = s[len("<<"):]
	tabs := strings.HasPrefix(s, "-")
	if tabs {
		s = s[1:]
	}
	delim, after, ok := readWord(strings.TrimLeft(s, " \t"))
	if !ok || delim == "" {
		return "", "", false
	}
	first, after, found := strings.Cut(after, "\n")
	if strings.TrimSpace(first) != "" || !found {
		return "", "", false // something else on the command line: not a plain invocation
	}
	var b strings.Builder
	for after != "" {
		line, next, _ := strings.Cut(after, "\n")
		if tabs {
			line = strings.TrimLeft(line, "\t")
		}
		if line == delim {
			return b.String(), next, true
		}
		b.WriteString(line + "\n")
		after = next
	}
	return b.String(), "", true
}

// readWord reads one shell word at the start of s: bare characters (a
// backslash escapes the next one), 'single-quoted', "double-quoted" (where
// a backslash escapes $ ` " \ and a newline) and $'ANSI-C quoted' parts,
// up to unquoted whitespace or an operator. ok is false for an unclosed
// quote.
func readWord(s string) (word, rest string, ok bool) {
	var b strings.Builder
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case strings.IndexByte(" \t\n&;|<>()", c) >= 0:
			return b.String(), s[i:], true
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return "", "", false
			}
			b.WriteString(s[i+1 : i+1+end])
			i += end + 2
		case c == '"':
			n, ok := readDoubleQuoted(s[i+1:], &b)
			if !ok {
				return "", "", false
			}
			i += n + 2
		case c == '$' && i+1 < len(s) && s[i+1] == '\'':
			n, ok := readANSIQuoted(s[i+2:], &b)
			if !ok {
				return "", "", false
			}
			i += n + 3
		case c == '\\' && i+1 < len(s):
			if s[i+1] != '\n' {
				b.WriteByte(s[i+1])
			}
			i += 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), "", true
}

// readDoubleQuoted reads the inside of "…" into b and returns its length,
// without the closing quote.
func readDoubleQuoted(s string, b *strings.Builder) (int, bool) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return i, true
		case c == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0:
			if s[i+1] != '\n' {
				b.WriteByte(s[i+1])
			}
			i++
		default:
			b.WriteByte(c)
		}
	}
	return 0, false
}

// readANSIQuoted reads the inside of $'…' into b and returns its length,
// without the closing quote: \n, \t, \r, \\, \' and \" are escapes.
func readANSIQuoted(s string, b *strings.Builder) (int, bool) {
	escapes := map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', '\\': '\\', '\'': '\'', '"': '"'}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'':
			return i, true
		case c == '\\' && i+1 < len(s) && escapes[s[i+1]] != 0:
			b.WriteByte(escapes[s[i+1]])
			i++
		default:
			b.WriteByte(c)
		}
	}
	return 0, false
}

// stripHeredoc returns the patch inside text when text is a whole shell
// invocation of apply_patch (a model's habit in the input of the tool
// itself), else text as it is.
func stripHeredoc(text string) string {
	if !strings.HasPrefix(strings.TrimSpace(text), "apply_patch") {
		return text
	}
	inv, isPatch, msg := FromShell(text)
	if !isPatch || msg != "" || inv.Dir != "" {
		return text
	}
	return inv.Text
}

// FromShellArgs reads a shell call's JSON arguments as an apply_patch
// invocation: a command string FromShell recognises, or the argv form
// models trained on another shell tool send, ["apply_patch", PATCH] or
// [SHELL, "-c" or "-lc", COMMAND]. isPatch false means the call is an
// ordinary shell call (or invalid, which the shell tool reports).
func FromShellArgs(raw json.RawMessage) (inv Invocation, isPatch bool, msg string) {
	var a struct {
		Command json.RawMessage `json:"command"`
	}
	if json.Unmarshal(raw, &a) != nil || len(a.Command) == 0 {
		return Invocation{}, false, ""
	}
	var command string
	if json.Unmarshal(a.Command, &command) == nil {
		return FromShell(command)
	}
	var argv []string
	if json.Unmarshal(a.Command, &argv) != nil {
		return Invocation{}, false, ""
	}
	switch {
	case len(argv) == 2 && argv[0] == "apply_patch":
		return Invocation{Text: argv[1]}, true, ""
	case len(argv) == 3 && isShellName(argv[0]) && (argv[1] == "-c" || argv[1] == "-lc"):
		return FromShell(argv[2])
	}
	return Invocation{}, false, ""
}

func isShellName(s string) bool {
	switch strings.TrimPrefix(strings.TrimPrefix(s, "/usr"), "/bin/") {
	case "sh", "bash", "zsh", "dash":
		return true
	}
	return false
}
