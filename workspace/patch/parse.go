package patch

import (
	"fmt"
	"strings"
)

// The markers of the apply_patch format.
const (
	patchBegin   = "*** Begin Patch"
	patchEnd     = "*** End Patch"
	HeaderAdd    = "*** Add File:"
	HeaderDelete = "*** Delete File:"
	HeaderUpdate = "*** Update File:"
	HeaderMove   = "*** Move to:"
	patchEOF     = "*** End of File"
	hunkMark     = "@@"
)

// Patch is a parsed apply_patch document: its file operations in the order
// given. A plain value, built by Parse for one call.
type Patch struct {
	Ops []Op
}

// OpKind says what an Op does to its file.
type OpKind int

const (
	OpAdd OpKind = iota
	OpDelete
	OpUpdate
)

// Op is one file's part of a patch; it lives as long as its patch.
type Op struct {
	Kind   OpKind
	Path   string   // as the patch gives it, trimmed
	MoveTo string   // update: the new path, "" to keep it
	Lines  []string // add: the new file's lines, without their '+'
	Hunks  []Hunk   // update: the changes, in file order
	Line   int      // where the op starts in the patch, 1-based
}

// Hunk is one change in an updated file: its lines, located in the file by
// the context and removed ones. It lives as long as its patch.
type Hunk struct {
	headers []string   // texts of its "@@ text" lines: each narrows the search to after a line matching it
	lines   []hunkLine // in order
	eof     bool       // "*** End of File" followed it: the hunk ends the file
	line    int        // where the hunk starts in the patch, 1-based
}

// hunkLine is one line of a hunk: ' ' context, '-' removed, '+' added.
type hunkLine struct {
	op   byte
	text string
}

// patchParser reads the lines of a patch one at a time. It lives for one
// Parse.
type patchParser struct {
	lines []string
	i     int // index of the next line
}

// Parse parses the text of an apply_patch call. It takes every text
// Grammar makes, and forgives what models do to the format: a shell
// heredoc around it, CRLF line ends, blank lines between operations, a
// missing final newline, a blank line standing for an empty context line.
// The error names the patch's line and what was expected there.
func Parse(text string) (*Patch, error) {
	p := &patchParser{lines: patchLines(stripHeredoc(text))}
	p.skipBlank()
	if p.done() {
		return nil, fmt.Errorf("the patch is empty: expected %q as its first line", patchBegin)
	}
	if strings.TrimSpace(p.peek()) != patchBegin {
		return nil, p.errorf("expected %q as the first line", patchBegin)
	}
	p.i++
	var out Patch
	for {
		p.skipBlank()
		if p.done() {
			return nil, p.errorf("expected %q as the last line (is the patch cut short?)", patchEnd)
		}
		line := strings.TrimSpace(p.peek())
		if line == patchEnd {
			p.i++
			break
		}
		op, err := p.parseOp()
		if err != nil {
			return nil, err
		}
		out.Ops = append(out.Ops, op)
	}
	if p.skipBlank(); !p.done() {
		return nil, p.errorf("expected nothing after %q, got %q", patchEnd, clipLine(p.peek()))
	}
	if len(out.Ops) == 0 {
		return nil, fmt.Errorf("the patch changes no file; give at least one %q, %q or %q section", HeaderAdd, HeaderUpdate, HeaderDelete)
	}
	return &out, nil
}

// patchLines splits text into lines, without their line ends ("\n", "\r\n",
// and any other '\r' before the "\n").
func patchLines(text string) []string {
	text = strings.TrimSuffix(text, "\n")
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, "\r")
	}
	return lines
}

// parseOp parses one file operation, starting at its "***" line.
func (p *patchParser) parseOp() (Op, error) {
	start := p.i + 1
	line := strings.TrimSpace(p.peek())
	kind, path, ok := opHeader(line)
	if line == patchEOF {
		return Op{}, p.errorf("%q must follow the lines of an update's last hunk", patchEOF)
	}
	if !ok {
		return Op{}, p.errorf("expected %q, %q, %q or %q, got %q", HeaderAdd+" PATH", HeaderUpdate+" PATH", HeaderDelete+" PATH", patchEnd, clipLine(p.peek()))
	}
	if path == "" {
		return Op{}, p.errorf("%q needs a path after the colon", line)
	}
	p.i++
	op := Op{Kind: kind, Path: path, Line: start}
	switch kind {
	case OpAdd:
		lines, err := p.parseAdded()
		if err != nil {
			return Op{}, err
		}
		if len(lines) == 0 {
			return Op{}, fmt.Errorf("line %d: %q has no lines: give the new file's lines, each starting with '+'", start, line)
		}
		op.Lines = lines
	case OpUpdate:
		if !p.done() {
			if dest, ok := strings.CutPrefix(strings.TrimSpace(p.peek()), HeaderMove); ok {
				if op.MoveTo = strings.TrimSpace(dest); op.MoveTo == "" {
					return Op{}, p.errorf("%q needs a path after the colon", HeaderMove)
				}
				p.i++
			}
		}
		hunks, err := p.parseHunks()
		if err != nil {
			return Op{}, err
		}
		op.Hunks = hunks
	}
	return op, nil
}

// opHeader reads a file operation's first line.
func opHeader(line string) (OpKind, string, bool) {
	for _, h := range []struct {
		mark string
		kind OpKind
	}{{HeaderAdd, OpAdd}, {HeaderDelete, OpDelete}, {HeaderUpdate, OpUpdate}} {
		if rest, ok := strings.CutPrefix(line, h.mark); ok {
			return h.kind, strings.TrimSpace(rest), true
		}
	}
	return 0, "", false
}

// parseAdded reads the lines of an added file: each starts with '+'. A
// blank line is an empty line of the file, unless no '+' line follows it
// before the next operation.
func (p *patchParser) parseAdded() ([]string, error) {
	var lines []string
	blank := 0
	for ; !p.done(); p.i++ {
		l := p.peek()
		switch {
		case strings.TrimSpace(l) == "":
			blank++
			continue
		case isOpLine(l):
			p.i -= blank
			return lines, nil
		case l[0] != '+':
			return nil, p.errorf("expected a line starting with '+' (every line of an added file starts with '+'), got %q", clipLine(l))
		}
		for ; blank > 0; blank-- {
			lines = append(lines, "")
		}
		lines = append(lines, l[1:])
	}
	p.i -= blank
	return lines, nil
}

// parseHunks reads an updated file's hunks, up to the next operation. The
// first hunk may start without an "@@" line; an "@@" line need not be
// followed by any (the reference grammar allows it: such a hunk changes
// nothing). "*** End of File" ends the update's last hunk, and the update.
func (p *patchParser) parseHunks() ([]Hunk, error) {
	var hunks []Hunk
	for {
		p.skipBlank()
		if p.done() || isOpLine(p.peek()) {
			return hunks, nil
		}
		if n := len(hunks); n > 0 && hunks[n-1].eof {
			return nil, p.errorf("expected the next file's operation or %q after %q, which ends the update's last hunk, got %q", patchEnd, patchEOF, clipLine(p.peek()))
		}
		h := Hunk{line: p.i + 1}
		explicit := false
		for !p.done() && strings.HasPrefix(p.peek(), hunkMark) {
			if text := strings.TrimSpace(p.peek()[len(hunkMark):]); text != "" {
				h.headers = append(h.headers, text)
			}
			explicit = true
			p.i++
		}
		if !explicit && len(hunks) > 0 {
			return nil, p.errorf("expected an @@ line to start the next hunk, got %q", clipLine(p.peek()))
		}
		if err := p.parseHunkBody(&h); err != nil {
			return nil, err
		}
		hunks = append(hunks, h)
	}
}

// parseHunkBody reads a hunk's lines after its "@@" lines. Blank lines
// stand for empty context lines, except at the hunk's end, where they are
// taken for spacing.
func (p *patchParser) parseHunkBody(h *Hunk) error {
	blank := 0
	for ; !p.done(); p.i++ {
		l := p.peek()
		switch {
		case bareBlank(l):
			blank++
			continue
		case strings.HasPrefix(l, hunkMark) || isOpLine(l):
			p.i -= blank
			p.endHunk(h)
			return nil
		case l[0] != ' ' && l[0] != '-' && l[0] != '+':
			return p.errorf("expected a hunk line starting with ' ', '-' or '+', got %q (context lines start with a space)", clipLine(l))
		}
		for ; blank > 0; blank-- {
			h.lines = append(h.lines, hunkLine{op: ' '})
		}
		h.lines = append(h.lines, hunkLine{op: l[0], text: l[1:]})
	}
	p.i -= blank
	p.endHunk(h)
	return nil
}

// endHunk finishes a hunk at the line after its last one: an "End of File"
// marker there, after blank lines or none, belongs to it.
func (p *patchParser) endHunk(h *Hunk) {
	j := p.i
	for j < len(p.lines) && strings.TrimSpace(p.lines[j]) == "" {
		j++
	}
	if j < len(p.lines) && strings.TrimSpace(p.lines[j]) == patchEOF {
		h.eof = true
		p.i = j + 1
	}
}

// bareBlank reports whether l, a line inside a hunk, is blank without the
// space that starts a context line.
func bareBlank(l string) bool {
	return (l == "" || l[0] != ' ') && strings.TrimSpace(l) == ""
}

// isOpLine reports whether l starts an operation, ends the patch or marks
// the end of the file: a line no hunk holds. A line starting with a space
// is not one, whatever follows: it is a context line.
func isOpLine(l string) bool {
	return strings.HasPrefix(l, "*** ")
}

func (p *patchParser) done() bool   { return p.i >= len(p.lines) }
func (p *patchParser) peek() string { return p.lines[p.i] }

func (p *patchParser) skipBlank() {
	for !p.done() && strings.TrimSpace(p.peek()) == "" {
		p.i++
	}
}

// errorf is an error at the current line.
func (p *patchParser) errorf(format string, args ...any) error {
	return fmt.Errorf("line %d: "+format, append([]any{p.i + 1}, args...)...)
}

// clipLine shortens a line quoted in a message.
func clipLine(l string) string {
	if r := []rune(l); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return l
}

// String renders the patch in the format Parse reads: parsing it
// gives the same patch back.
func (pt *Patch) String() string {
	var b strings.Builder
	b.WriteString(patchBegin + "\n")
	for _, op := range pt.Ops {
		switch op.Kind {
		case OpAdd:
			b.WriteString(HeaderAdd + " " + op.Path + "\n")
			for _, l := range op.Lines {
				b.WriteString("+" + l + "\n")
			}
		case OpDelete:
			b.WriteString(HeaderDelete + " " + op.Path + "\n")
		case OpUpdate:
			b.WriteString(HeaderUpdate + " " + op.Path + "\n")
			if op.MoveTo != "" {
				b.WriteString(HeaderMove + " " + op.MoveTo + "\n")
			}
			for _, h := range op.Hunks {
				h.render(&b)
			}
		}
	}
	b.WriteString(patchEnd + "\n")
	return b.String()
}

func (h *Hunk) render(b *strings.Builder) {
	if len(h.headers) == 0 {
		b.WriteString(hunkMark + "\n")
	}
	for _, hd := range h.headers {
		b.WriteString(hunkMark + " " + hd + "\n")
	}
	for _, l := range h.lines {
		b.WriteByte(l.op)
		b.WriteString(l.text + "\n")
	}
	if h.eof {
		b.WriteString(patchEOF + "\n")
	}
}
