package sandbox

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// headTail is an io.Writer that keeps the first headMax and the last tailMax
// bytes written to it and counts the rest, so a command's output costs
// bounded memory however much it prints. Used by one goroutine at a time;
// lives for one command.
type headTail struct {
	headMax, tailMax int
	head             []byte
	tail             []byte // the last bytes seen; up to 2*tailMax before it is compacted
	total            int64
}

func newHeadTail(headMax, tailMax int) *headTail {
	return &headTail{headMax: headMax, tailMax: tailMax}
}

func (h *headTail) Write(p []byte) (int, error) {
	n := len(p)
	h.total += int64(n)
	if room := h.headMax - len(h.head); room > 0 {
		take := min(room, len(p))
		h.head = append(h.head, p[:take]...)
		p = p[take:]
	}
	switch {
	case len(p) == 0:
	case len(p) >= h.tailMax:
		h.tail = append(h.tail[:0], p[len(p)-h.tailMax:]...)
	default:
		h.tail = append(h.tail, p...)
		if len(h.tail) > 2*h.tailMax {
			h.tail = append(h.tail[:0], h.tail[len(h.tail)-h.tailMax:]...)
		}
	}
	return n, nil
}

// String returns what was kept as valid UTF-8: everything, or the head, a
// line saying how many bytes were left out, and the tail. The cut never
// splits a character.
func (h *headTail) String() string {
	tail := h.tail
	if len(tail) > h.tailMax {
		tail = tail[len(tail)-h.tailMax:]
	}
	return JoinCut(h.head, tail, h.total, func(omitted int64) string {
		return fmt.Sprintf("\n[... %d bytes omitted ...]\n", omitted)
	})
}

// JoinCut is the head and tail kept of an output total bytes long, as
// valid UTF-8: joined when nothing was left out between them; else each
// loses the character the cut split, and mark(omitted bytes) goes
// between them.
func JoinCut(head, tail []byte, total int64, mark func(omitted int64) string) string {
	if int64(len(head)+len(tail)) == total {
		return validUTF8(append(bytes.Clone(head), tail...))
	}
	head, tail = trimPartialRuneEnd(head), trimPartialRuneStart(tail)
	omitted := total - int64(len(head)) - int64(len(tail))
	return validUTF8(head) + mark(omitted) + validUTF8(tail)
}

func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
}

// trimPartialRuneEnd drops an incomplete UTF-8 sequence at the end of b.
func trimPartialRuneEnd(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			return b
		}
	}
	return b
}

// trimPartialRuneStart drops the continuation bytes of a character cut at
// the start of b.
func trimPartialRuneStart(b []byte) []byte {
	for i := 0; i < len(b) && i < utf8.UTFMax; i++ {
		if utf8.RuneStart(b[i]) {
			return b[i:]
		}
	}
	if len(b) < utf8.UTFMax {
		return b[:0] // all of it the end of one character
	}
	return b
}
