package patch

import (
	"errors"
	"fmt"
	"strings"
)

// How closely a hunk's lines must match the file's, tried in this order:
// the first level that finds the lines wins.
var matchLevels = []func(string) string{
	func(s string) string { return s },
	func(s string) string { return strings.TrimRight(s, " \t\r\f\v") },
	strings.TrimSpace,
}

// fileText is a text file as lines, with what joining them back needs. A
// plain value for one ApplyHunks.
type fileText struct {
	lines []string
	eol   string // "\r\n" when every line ends so, else "\n"
	final bool   // the text ends with a line end (or is empty)
}

func splitText(s string) fileText {
	t := fileText{eol: "\n", final: s == "" || strings.HasSuffix(s, "\n")}
	if n := strings.Count(s, "\n"); n > 0 && strings.Count(s, "\r\n") == n {
		t.eol = "\r\n"
	}
	if s == "" {
		return t
	}
	t.lines = strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if t.eol == "\r\n" {
		for i, l := range t.lines {
			t.lines[i] = strings.TrimSuffix(l, "\r")
		}
	}
	return t
}

func (t fileText) String() string {
	if len(t.lines) == 0 {
		return ""
	}
	s := strings.Join(t.lines, t.eol)
	if t.final {
		s += t.eol
	}
	return s
}

// ApplyHunks applies the hunks of one updated file to its text, in order:
// each is looked for after the previous one. Context lines keep the file's
// text (a match that ignored whitespace changes none), removed lines go,
// added lines come in. The file keeps its line ends and its final newline,
// or lack of one unless its last line is now empty. The error names the
// hunk (1-based, with its first line) and why it does not apply.
func ApplyHunks(rel, old string, hunks []Hunk) (string, error) {
	t := splitText(old)
	var out []string
	pos := 0
	for i := range hunks {
		h := &hunks[i]
		from := h.expected()
		at, err := locateHunk(t.lines, pos, h, from)
		if err != nil {
			msg := fmt.Sprintf("hunk %d of %s (line %d of the patch%s): %v", i+1, rel, h.line, firstLine(h), err)
			if nf := (*linesNotFound)(nil); errors.As(err, &nf) {
				msg += ". The expected lines:\n" + quoteLines(from)
			}
			return "", errors.New(msg)
		}
		out = append(out, t.lines[pos:at]...)
		k := at
		for _, l := range h.lines {
			switch l.op {
			case ' ':
				out = append(out, t.lines[k])
				k++
			case '-':
				k++
			default:
				out = append(out, l.text)
			}
		}
		pos = k
	}
	t.lines = append(out, t.lines[pos:]...)
	if n := len(t.lines); n > 0 && t.lines[n-1] == "" {
		t.final = true // else the empty last line would vanish into the line end before it
	}
	return t.String(), nil
}

// expected returns the lines a hunk expects in the file: its context and
// removed lines.
func (h *Hunk) expected() []string {
	var from []string
	for _, l := range h.lines {
		if l.op != '+' {
			from = append(from, l.text)
		}
	}
	return from
}

// firstLine quotes the first line of a hunk for a message.
func firstLine(h *Hunk) string {
	if len(h.headers) > 0 {
		return fmt.Sprintf(", @@ %q", clipLine(h.headers[0]))
	}
	if len(h.lines) > 0 {
		return fmt.Sprintf(", starting %q", clipLine(string(h.lines[0].op)+h.lines[0].text))
	}
	return ""
}

// locateHunk finds where from, a hunk's expected lines, sits in lines at or
// after pos: after the lines matching its headers, at the end of the file
// when it says so (else anywhere after), exact lines first, then ignoring
// trailing whitespace, then ignoring whitespace at both ends.
func locateHunk(lines []string, pos int, h *Hunk, from []string) (int, error) {
	for _, hd := range h.headers {
		at := seek(lines, []string{hd}, pos, false)
		switch {
		case at < 0 && pos == 0:
			return 0, fmt.Errorf("no line matching the @@ line %q was found; read the file again and copy the line exactly", clipLine(hd))
		case at < 0:
			return 0, fmt.Errorf("no line matching the @@ line %q was found after line %d, where the previous hunk or @@ line matched", clipLine(hd), pos)
		}
		pos = at + 1
	}
	if len(from) == 0 {
		// Only added lines: they go after the header's line, or at the end.
		if len(h.headers) > 0 && !h.eof {
			return pos, nil
		}
		return len(lines), nil
	}
	if h.eof {
		if at := seek(lines, from, len(lines)-len(from), true); at >= pos {
			return at, nil
		}
	}
	if at := seek(lines, from, pos, false); at >= 0 {
		return at, nil
	}
	return 0, notFound(lines, pos, from)
}

// seek returns the first index at or after start where pattern matches
// lines, trying each match level in turn; -1 if none does. With atEnd the
// only place tried is start.
func seek(lines, pattern []string, start int, atEnd bool) int {
	if start < 0 || len(pattern) > len(lines) {
		return -1
	}
	last := len(lines) - len(pattern)
	if atEnd {
		last = start
	}
	for _, norm := range matchLevels {
		for i := start; i <= last; i++ {
			if matchAt(lines, pattern, i, norm) {
				return i
			}
		}
	}
	return -1
}

func matchAt(lines, pattern []string, at int, norm func(string) string) bool {
	for j, p := range pattern {
		if norm(lines[at+j]) != norm(p) {
			return false
		}
	}
	return true
}

// maxHintWork bounds the comparisons notFound makes looking for the
// closest match: a hint is not worth a long wait.
const maxHintWork = 20_000_000

// linesNotFound says a hunk's expected lines are nowhere after the
// previous hunk: ApplyHunks then lists them, as the models were trained to
// read it.
type linesNotFound struct{ why string }

func (e *linesNotFound) Error() string { return e.why }

// maxQuotedLines bounds the expected lines a failure lists.
const maxQuotedLines = 40

// quoteLines lists lines one a line, the first maxQuotedLines of them.
func quoteLines(lines []string) string {
	if len(lines) <= maxQuotedLines {
		return strings.Join(lines, "\n")
	}
	return strings.Join(lines[:maxQuotedLines], "\n") + fmt.Sprintf("\n(… %d more lines)", len(lines)-maxQuotedLines)
}

// notFound explains why from was not found: where the closest match is and
// its first line that differs, or that it lies before the previous hunk.
func notFound(lines []string, pos int, from []string) error {
	if pos > 0 {
		if at := seek(lines[:min(len(lines), pos+len(from))], from, 0, false); at >= 0 && at < pos {
			return fmt.Errorf("its lines are at line %d, before the previous hunk's change: give the hunks in the order of the file", at+1)
		}
	}
	best, bestN := -1, 0
	if len(lines)*len(from) <= maxHintWork {
		for i := 0; i+len(from) <= len(lines); i++ {
			n := 0
			for j, p := range from {
				if strings.TrimSpace(lines[i+j]) == strings.TrimSpace(p) {
					n++
				}
			}
			if n > bestN {
				best, bestN = i, n
			}
		}
	}
	msg := "the expected lines (context and '-' lines) are not in the file"
	if best >= 0 && bestN*2 >= len(from) {
		for j, p := range from {
			if got := lines[best+j]; strings.TrimSpace(got) != strings.TrimSpace(p) {
				msg += fmt.Sprintf("; the closest match, at line %d, differs at line %d: the file has %q, the patch %q", best+1, best+j+1, clipLine(got), clipLine(p))
				break
			}
		}
	}
	return &linesNotFound{msg + "; read the file again and copy them exactly"}
}
