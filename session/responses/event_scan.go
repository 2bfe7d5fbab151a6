package responses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// The JSON scanning under eventReader: it checks a value as encoding/json
// would and hands its bytes to a sink, or skips them, as they stream by.

// more reports whether unread bytes remain, reading more when the window
// is empty.
func (p *eventReader) more() bool {
	for empty := 0; p.r == p.w; empty++ {
		if p.err != nil {
			return false
		}
		if empty == 100 {
			p.err = io.ErrNoProgress
			return false
		}
		p.r, p.w = 0, 0
		n, err := p.src.Read(p.buf)
		p.w = n
		p.size += int64(n)
		if err != nil {
			p.err = err
		}
	}
	return true
}

// peek returns the next byte without taking it (0 at the end: never a
// valid byte where it is looked at).
func (p *eventReader) peek() byte {
	if !p.more() {
		return 0
	}
	return p.buf[p.r]
}

func (p *eventReader) space() {
	for p.more() {
		switch p.buf[p.r] {
		case ' ', '\t', '\n', '\r':
			p.r++
		default:
			return
		}
	}
}

// expect takes c, after white space.
func (p *eventReader) expect(c byte) error {
	p.space()
	if p.peek() != c {
		return p.unexpected(fmt.Sprintf("%q", c))
	}
	p.r++
	return nil
}

func (p *eventReader) unexpected(want string) error {
	if !p.more() {
		if p.err != nil && p.err != io.EOF {
			return p.err
		}
		return fmt.Errorf("%w: the frame ends where %s belongs", errNotJSON, want)
	}
	return fmt.Errorf("%w: %q where %s belongs", errNotJSON, p.buf[p.r], want)
}

// value scans one JSON value, checking it, into s (nil: skipped).
func (p *eventReader) value(s *sink) error {
	p.space()
	switch c := p.peek(); {
	case c == '{' || c == '[':
		return p.composite(s, c)
	case c == '"':
		return p.str(s)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number(s)
	case c == 't':
		return p.literal(s, "true")
	case c == 'f':
		return p.literal(s, "false")
	case c == 'n':
		return p.literal(s, "null")
	}
	return p.unexpected("a value")
}

func (p *eventReader) composite(s *sink, open byte) error {
	if p.depth++; p.depth > maxDepth {
		return fmt.Errorf("%w: nested too deep", errNotJSON)
	}
	defer func() { p.depth-- }()
	close := byte('}')
	if open == '[' {
		close = ']'
	}
	p.r++
	s.add([]byte{open})
	p.space()
	if p.peek() == close {
		p.r++
		s.add([]byte{close})
		return nil
	}
	for {
		if open == '{' {
			p.space()
			if p.peek() != '"' {
				return p.unexpected("a member name")
			}
			if err := p.str(s); err != nil {
				return err
			}
			if err := p.expect(':'); err != nil {
				return err
			}
			s.add([]byte{':'})
		}
		if err := p.value(s); err != nil {
			return err
		}
		p.space()
		switch p.peek() {
		case ',':
			p.r++
			s.add([]byte{','})
		case close:
			p.r++
			s.add([]byte{close})
			return nil
		default:
			return p.unexpected(fmt.Sprintf("',' or %q", close))
		}
	}
}

// str scans a string, quotes included, checking its escapes.
func (p *eventReader) str(s *sink) error {
	p.r++ // the opening quote
	s.add([]byte{'"'})
	for {
		if !p.more() {
			return p.unexpected("the end of a string")
		}
		start := p.r
		for p.r < p.w {
			c := p.buf[p.r]
			if c == '"' || c == '\\' || c < 0x20 {
				break
			}
			p.r++
		}
		s.add(p.buf[start:p.r])
		if p.r == p.w {
			continue
		}
		switch c := p.buf[p.r]; {
		case c == '"':
			p.r++
			s.add([]byte{'"'})
			return nil
		case c < 0x20:
			return fmt.Errorf("%w: a control character in a string", errNotJSON)
		}
		if err := p.escape(s); err != nil {
			return err
		}
	}
}

// escape scans one escape sequence, at its backslash.
func (p *eventReader) escape(s *sink) error {
	p.r++
	var seq [6]byte
	seq[0] = '\\'
	if !p.more() {
		return p.unexpected("an escape")
	}
	c := p.buf[p.r]
	p.r++
	seq[1] = c
	switch c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.add(seq[:2])
		return nil
	case 'u':
		for i := 2; i < 6; i++ {
			if !p.more() {
				return p.unexpected("a hex digit")
			}
			h := p.buf[p.r]
			if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
				return fmt.Errorf("%w: %q in a \\u escape", errNotJSON, h)
			}
			seq[i] = h
			p.r++
		}
		s.add(seq[:])
		return nil
	}
	return fmt.Errorf("%w: invalid escape \\%c", errNotJSON, c)
}

func (p *eventReader) number(s *sink) error {
	_, err := p.numberTok(s, nil)
	return err
}

// numberTok scans a number into s, and its first bytes into tok.
func (p *eventReader) numberTok(s *sink, tok *[24]byte) (int, error) {
	n := 0
	take := func() {
		if tok != nil && n < len(tok) {
			tok[n] = p.buf[p.r]
		}
		n++
		s.add(p.buf[p.r : p.r+1])
		p.r++
	}
	digits := func() int {
		k := 0
		for p.more() && p.buf[p.r] >= '0' && p.buf[p.r] <= '9' {
			take()
			k++
		}
		return k
	}
	if p.peek() == '-' {
		take()
	}
	switch c := p.peek(); {
	case c == '0':
		take()
	case c >= '1' && c <= '9':
		digits()
	default:
		return n, p.unexpected("a digit")
	}
	if p.peek() == '.' {
		take()
		if digits() == 0 {
			return n, p.unexpected("a digit")
		}
	}
	if c := p.peek(); c == 'e' || c == 'E' {
		take()
		if c := p.peek(); c == '+' || c == '-' {
			take()
		}
		if digits() == 0 {
			return n, p.unexpected("a digit")
		}
	}
	return n, nil
}

func (p *eventReader) literal(s *sink, lit string) error {
	for i := 0; i < len(lit); i++ {
		if p.peek() != lit[i] {
			return p.unexpected(strconv.Quote(lit))
		}
		p.r++
	}
	s.add([]byte(lit))
	return nil
}

// members scans an object, calling f for each member with the index in
// names of the one its name matches as encoding/json matches names to
// fields (exactly, else without regard to case), or -1, and the reader at
// its value, which f scans. A null instead of the object calls nothing;
// null reports it.
func (p *eventReader) members(names []string, f func(i int) error) (null bool, err error) {
	p.space()
	if p.peek() == 'n' {
		return true, p.literal(nil, "null")
	}
	if p.peek() != '{' {
		return false, p.unexpected("an object")
	}
	if p.depth++; p.depth > maxDepth {
		return false, fmt.Errorf("%w: nested too deep", errNotJSON)
	}
	defer func() { p.depth-- }()
	p.r++
	p.space()
	if p.peek() == '}' {
		p.r++
		return false, nil
	}
	for {
		p.space()
		if p.peek() != '"' {
			return false, p.unexpected("a member name")
		}
		i := -1
		if name, ok := p.quick(); ok {
			i = match(names, name)
		} else {
			name, err := p.text(1 << 10)
			if err != nil {
				return false, err
			}
			i = match(names, []byte(name))
		}
		if err := p.expect(':'); err != nil {
			return false, err
		}
		if err := f(i); err != nil {
			return false, err
		}
		p.space()
		switch p.peek() {
		case ',':
			p.r++
		case '}':
			p.r++
			return false, nil
		default:
			return false, p.unexpected("',' or '}'")
		}
	}
}

// match returns the index of the name in names that name goes to, or -1.
func match(names []string, name []byte) int {
	for i, n := range names {
		if string(name) == n {
			return i
		}
	}
	ascii := true
	for _, c := range name {
		ascii = ascii && c < utf8.RuneSelf
	}
	for i, n := range names {
		if (!ascii || len(name) == len(n)) && bytes.EqualFold(name, []byte(n)) {
			return i
		}
	}
	return -1
}

// quick takes a string that lies whole in the read window and needs no
// decoding, and returns its bytes (valid until the window moves); false,
// having taken nothing, for any other.
func (p *eventReader) quick() ([]byte, bool) {
	if !p.more() || p.buf[p.r] != '"' {
		return nil, false
	}
	for i := p.r + 1; i < p.w; i++ {
		switch c := p.buf[i]; {
		case c == '"':
			b := p.buf[p.r+1 : i]
			if !utf8.Valid(b) {
				return nil, false
			}
			p.r = i + 1
			return b, true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// text scans a string value of at most max bytes (longer ones are read and
// dropped: "") and decodes it.
func (p *eventReader) text(max int64) (string, error) {
	s := sink{max: max}
	if err := p.str(&s); err != nil {
		return "", err
	}
	return unquote(s.bytes())
}

// unquote decodes a JSON string, as encoding/json does (invalid UTF-8
// becomes U+FFFD).
func unquote(q []byte) (string, error) {
	if len(q) < 2 {
		return "", nil // dropped: too long
	}
	if in := q[1 : len(q)-1]; bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
		return string(in), nil
	}
	var v string
	if err := json.Unmarshal(q, &v); err != nil {
		return "", fmt.Errorf("%w: %v", errNotJSON, err)
	}
	return v, nil
}
