package workspace

import (
	"fmt"
	"strings"
)

// The markers of the apply_patch format.
const (
	patchBegin  = "*** Begin Patch"
	patchEnd    = "*** End Patch"
	patchAdd    = "*** Add File:"
	patchDelete = "*** Delete File:"
	patchUpdate = "*** Update File:"
	patchMove   = "*** Move to:"
	patchEOF    = "*** End of File"
	hunkMark    = "@@"
)

// patch is a parsed apply_patch document: its file operations in the order
// given. A plain value, built by parsePatch for one call.
type patch struct {
	ops []patchOp
}

// opKind says what a patchOp does to its file.
type opKind int

const (
	opAdd opKind = iota
	opDelete
	opUpdate
)

// patchOp is one file's part of a patch; it lives as long as its patch.
type patchOp struct {
	kind   opKind
	path   string   // as the patch gives it, trimmed
	moveTo string   // update: the new path, "" to keep it
	lines  []string // add: the new file's lines, without their '+'
	hunks  []hunk   // update: the changes, in file order
	line   int      // where the op starts in the patch, 1-based
}

// hunk is one change in an updated file: its lines, located in the file by
// the context and removed ones. It lives as long as its patch.
type hunk struct {
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
// parsePatch.
type patchParser struct {
	lines []string
	i     int // index of the next line
}

// parsePatch parses the text of an apply_patch call. It forgives what
// models do to the format: a shell heredoc around it, CRLF line ends,
// blank lines between operations, a missing final newline, a blank line
// standing for an empty context line. The error names the patch's line and
// what was expected there.
func parsePatch(text string) (*patch, error) {
	p := &patchParser{lines: patchLines(stripHeredoc(text))}
	p.skipBlank()
	if p.done() {
		return nil, fmt.Errorf("the patch is empty: expected %q as its first line", patchBegin)
	}
	if strings.TrimSpace(p.peek()) != patchBegin {
		return nil, p.errorf("expected %q as the first line", patchBegin)
	}
	p.i++
	var out patch
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
		out.ops = append(out.ops, op)
	}
	if p.skipBlank(); !p.done() {
		return nil, p.errorf("expected nothing after %q, got %q", patchEnd, clipLine(p.peek()))
	}
	if len(out.ops) == 0 {
		return nil, fmt.Errorf("the patch changes no file; give at least one %q, %q or %q section", patchAdd, patchUpdate, patchDelete)
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
func (p *patchParser) parseOp() (patchOp, error) {
	start := p.i + 1
	line := strings.TrimSpace(p.peek())
	kind, path, ok := opHeader(line)
	if !ok {
		return patchOp{}, p.errorf("expected %q, %q, %q or %q, got %q", patchAdd+" PATH", patchUpdate+" PATH", patchDelete+" PATH", patchEnd, clipLine(p.peek()))
	}
	if path == "" {
		return patchOp{}, p.errorf("%q needs a path after the colon", line)
	}
	p.i++
	op := patchOp{kind: kind, path: path, line: start}
	switch kind {
	case opAdd:
		lines, err := p.parseAdded()
		if err != nil {
			return patchOp{}, err
		}
		op.lines = lines
	case opUpdate:
		if !p.done() {
			if dest, ok := strings.CutPrefix(strings.TrimSpace(p.peek()), patchMove); ok {
				if op.moveTo = strings.TrimSpace(dest); op.moveTo == "" {
					return patchOp{}, p.errorf("%q needs a path after the colon", patchMove)
				}
				p.i++
			}
		}
		hunks, err := p.parseHunks()
		if err != nil {
			return patchOp{}, err
		}
		if op.hunks = hunks; len(hunks) == 0 && op.moveTo == "" {
			return patchOp{}, fmt.Errorf("line %d: %q has no hunks; give its changes as lines starting with ' ', '-' or '+' after an @@ line", start, line)
		}
	}
	return op, nil
}

// opHeader reads a file operation's first line.
func opHeader(line string) (opKind, string, bool) {
	for _, h := range []struct {
		mark string
		kind opKind
	}{{patchAdd, opAdd}, {patchDelete, opDelete}, {patchUpdate, opUpdate}} {
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
// first hunk may start without an "@@" line.
func (p *patchParser) parseHunks() ([]hunk, error) {
	var hunks []hunk
	for {
		p.skipBlank()
		if p.done() || isOpLine(p.peek()) {
			return hunks, nil
		}
		h := hunk{line: p.i + 1}
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
func (p *patchParser) parseHunkBody(h *hunk) error {
	blank := 0
	for ; !p.done(); p.i++ {
		l := p.peek()
		switch {
		case bareBlank(l):
			blank++
			continue
		case strings.HasPrefix(l, hunkMark) || isOpLine(l):
			p.i -= blank
			return p.endHunk(h)
		case l[0] != ' ' && l[0] != '-' && l[0] != '+':
			return p.errorf("expected a hunk line starting with ' ', '-' or '+', got %q (context lines start with a space)", clipLine(l))
		}
		for ; blank > 0; blank-- {
			h.lines = append(h.lines, hunkLine{op: ' '})
		}
		h.lines = append(h.lines, hunkLine{op: l[0], text: l[1:]})
	}
	p.i -= blank
	return p.endHunk(h)
}

// endHunk finishes a hunk at the line after its last one: an "End of File"
// marker there belongs to it.
func (p *patchParser) endHunk(h *hunk) error {
	if len(h.lines) == 0 {
		if p.done() {
			return fmt.Errorf("line %d: the hunk has no lines (expected lines starting with ' ', '-' or '+', then %q)", h.line, patchEnd)
		}
		return p.errorf("the hunk that starts at line %d has no lines: expected lines starting with ' ', '-' or '+', got %q", h.line, clipLine(p.peek()))
	}
	if !p.done() && strings.TrimSpace(p.peek()) == patchEOF {
		h.eof = true
		p.i++
	}
	return nil
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

// String renders the patch in the format parsePatch reads: parsing it
// gives the same patch back.
func (pt *patch) String() string {
	var b strings.Builder
	b.WriteString(patchBegin + "\n")
	for _, op := range pt.ops {
		switch op.kind {
		case opAdd:
			b.WriteString(patchAdd + " " + op.path + "\n")
			for _, l := range op.lines {
				b.WriteString("+" + l + "\n")
			}
		case opDelete:
			b.WriteString(patchDelete + " " + op.path + "\n")
		case opUpdate:
			b.WriteString(patchUpdate + " " + op.path + "\n")
			if op.moveTo != "" {
				b.WriteString(patchMove + " " + op.moveTo + "\n")
			}
			for _, h := range op.hunks {
				h.render(&b)
			}
		}
	}
	b.WriteString(patchEnd + "\n")
	return b.String()
}

func (h *hunk) render(b *strings.Builder) {
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
