package cmdsafe

import (
	"errors"
	"fmt"
	"strings"
)

// Word is one argument of a simple command after quote removal. Glob says
// it held an unquoted *, ? or [: the shell may replace it by file names,
// which can be anything, flags included.
type Word struct {
	Text string
	Glob bool
}

// Simple is one simple command of a line: its program and arguments, the
// harmless redirections dropped.
type Simple struct {
	Args []Word
}

// Program is the command's first word.
func (s Simple) Program() string { return s.Args[0].Text }

// texts is the command's words as plain strings.
func (s Simple) texts() []string {
	out := make([]string, len(s.Args))
	for i, w := range s.Args {
		out[i] = w.Text
	}
	return out
}

// errNotUnderstood wraps every reason Parse refuses a line.
var errNotUnderstood = errors.New("outside the shell subset hearth reads")

// reserved are sh's reserved words: a compound command (if, for, while,
// case, a group) is never taken apart here.
var reserved = map[string]bool{"if": true, "then": true, "else": true, "elif": true, "fi": true, "do": true, "done": true,
	"case": true, "esac": true, "while": true, "until": true, "for": true, "in": true, "function": true, "select": true,
	"time": true, "!": true, "{": true, "}": true, "[[": true, "]]": true, "coproc": true}

// Parse splits line into its simple commands, joined by pipes, &&, ||, ;
// or newlines (which all run every part, or may: each is judged alone).
// It fails, wrapping a reason, on anything outside the subset the package
// doc names.
func Parse(line string) ([]Simple, error) {
	p := &parser{s: line}
	if err := p.run(); err != nil {
		return nil, fmt.Errorf("%w: %v", errNotUnderstood, err)
	}
	return p.out, nil
}

// parser is Parse's state over one line.
type parser struct {
	s   string
	i   int
	cur []Word
	out []Simple
	// open: an operator that needs a command after it (|, &&, ||) came last.
	open bool
}

func (p *parser) run() error {
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == ' ' || c == '\t':
			p.i++
		case c == '\n' || c == ';':
			if err := p.end(c == ';'); err != nil {
				return err
			}
			p.i++
		case c == '#': // run only stops at the start of a word
			for p.i < len(p.s) && p.s[p.i] != '\n' {
				p.i++
			}
		case c == '|':
			if p.peek(1) == '&' {
				return errors.New("|& pipes stderr in bash only")
			}
			if p.peek(1) == '|' {
				p.i++
			}
			p.i++
			if err := p.end(true); err != nil {
				return err
			}
			p.open = true
		case c == '&':
			if p.peek(1) != '&' {
				return errors.New("& runs a command in the background")
			}
			p.i += 2
			if err := p.end(true); err != nil {
				return err
			}
			p.open = true
		case c == '<' || c == '>' || isDigit(c) && p.redirAhead():
			if err := p.redirect(); err != nil {
				return err
			}
		default:
			w, err := p.word()
			if err != nil {
				return err
			}
			p.cur, p.open = append(p.cur, w), false
		}
	}
	if p.open {
		return errors.New("the line ends with an operator")
	}
	return p.end(false)
}

// atWordStart: a # after a blank starts a comment (one inside a word does
// not; word reads those).
func (p *parser) atWordStart() bool {
	return p.i == 0 || strings.IndexByte(" \t\n;|&", p.s[p.i-1]) >= 0
}

func (p *parser) peek(n int) byte {
	if p.i+n < len(p.s) {
		return p.s[p.i+n]
	}
	return 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// end closes the simple command being read. need: an operator or ; ends
// it, so it must not be empty.
func (p *parser) end(need bool) error {
	if len(p.cur) == 0 {
		if need || p.open {
			return errors.New("an empty command")
		}
		return nil
	}
	// Matched quoted or not: on the safe side.
	if first := p.cur[0].Text; reserved[first] {
		return fmt.Errorf("%q starts a compound command", first)
	}
	p.out = append(p.out, Simple{Args: p.cur})
	p.cur, p.open = nil, false
	return nil
}

// redirAhead: digits followed by < or > are a file descriptor's
// redirection when they start a word.
func (p *parser) redirAhead() bool {
	if !p.atWordStart() {
		return false
	}
	j := p.i
	for j < len(p.s) && isDigit(p.s[j]) {
		j++
	}
	return j < len(p.s) && (p.s[j] == '<' || p.s[j] == '>')
}

// redirect reads one redirection and accepts only those that write
// nothing: N>&M and N<&M (duplicates), > or >> to /dev/null, and < FILE.
func (p *parser) redirect() error {
	for isDigit(p.s[p.i]) {
		p.i++
	}
	op := string(p.s[p.i])
	p.i++
	if n := p.peek(0); n == '>' || n == '&' || n == '<' || n == '|' {
		op += string(n)
		p.i++
	}
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
	if p.i >= len(p.s) || strings.IndexByte("\n;|&<>", p.s[p.i]) >= 0 {
		return fmt.Errorf("redirection %s has no target", op)
	}
	target, err := p.word()
	if err != nil {
		return err
	}
	switch op {
	case ">&", "<&":
		if target.Glob || !allDigits(target.Text) {
			return fmt.Errorf("redirection %s%s", op, target.Text)
		}
	case ">", ">>", ">|":
		if target.Glob || target.Text != "/dev/null" {
			return fmt.Errorf("redirection to a file (%s %s) writes it", op, target.Text)
		}
	case "<":
		if target.Glob {
			return errors.New("redirection from a pattern")
		}
	default:
		return fmt.Errorf("redirection %s", op)
	}
	return nil
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// word reads one word: unquoted text, '…', "…" without $ or `, and
// backslash escapes. An assignment as a command's first word, or any
// expansion, fails.
func (p *parser) word() (Word, error) {
	var b strings.Builder
	var w Word
	start := p.i
	plain := true // no quote or escape so far: NAME= is an assignment
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch c {
		case ' ', '\t', '\n', ';', '|', '&', '<', '>':
			return p.finish(w, b.String(), start)
		case '\'':
			end := strings.IndexByte(p.s[p.i+1:], '\'')
			if end < 0 {
				return w, errors.New("an unterminated ' quote")
			}
			b.WriteString(p.s[p.i+1 : p.i+1+end])
			p.i += end + 2
			plain = false
		case '"':
			if err := p.doubleQuoted(&b); err != nil {
				return w, err
			}
			plain = false
		case '\\':
			switch n := p.peek(1); n {
			case 0:
				return w, errors.New("a backslash ends the line")
			case '\n':
				// a line continuation: nothing
			default:
				b.WriteByte(n)
			}
			p.i += 2
			plain = false
		case '$', '`':
			return w, fmt.Errorf("%c expands a variable or runs a command", c)
		case '(', ')':
			return w, errors.New("a subshell or function")
		case '{', '}':
			return w, errors.New("a brace group or brace expansion")
		case '*', '?', '[':
			w.Glob = true
			b.WriteByte(c)
			p.i++
		case '=':
			if plain && len(p.cur) == 0 && isName(b.String()) {
				return w, fmt.Errorf("the assignment %s= before the command", b.String())
			}
			b.WriteByte(c)
			p.i++
		case '!':
			if p.i == start {
				return w, errors.New("! negates a pipeline")
			}
			b.WriteByte(c)
			p.i++
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return p.finish(w, b.String(), start)
}

func (p *parser) finish(w Word, text string, start int) (Word, error) {
	if p.i == start {
		return w, errors.New("an empty word")
	}
	w.Text = text
	return w, nil
}

// doubleQuoted reads "…" at p.i into b: a backslash escapes $ ` " \ and
// newline only; $ and ` fail.
func (p *parser) doubleQuoted(b *strings.Builder) error {
	p.i++
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch c {
		case '"':
			p.i++
			return nil
		case '$', '`':
			return fmt.Errorf("%c in double quotes expands", c)
		case '\\':
			n := p.peek(1)
			switch n {
			case '$', '`', '"', '\\':
				b.WriteByte(n)
				p.i += 2
				continue
			case '\n':
				p.i += 2
				continue
			}
		}
		b.WriteByte(c)
		p.i++
	}
	return errors.New(`an unterminated " quote`)
}

// isName: a shell variable name.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && isDigit(c)) {
			return false
		}
	}
	return true
}
