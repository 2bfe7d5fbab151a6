package daemon

import (
	"fmt"
	"strings"
)

// maxDiffBytes bounds the old and new text of one diff shown to an editor
// (a permission prompt, a tool_call_update, a replay): an edit of an 8 MiB
// file would otherwise send 16 MiB in one message, over the frame limit of
// an editor's reader (hearth ask's is rpc.DefaultMaxMessage, 8 MiB).
const maxDiffBytes = 1 << 20

// diffContext is how many unchanged lines a bounded diff keeps on each side
// of the changed region.
const diffContext = 3

// boundDiff returns old and new as an editor should see them: whole when
// they fit maxDiffBytes together; else the changed region (the lines from
// the first that differs to the last) with diffContext lines around it; and
// when even that is too large, each side cut at a line end with a last line
// saying how much is not shown.
func boundDiff(old, new string) (string, string) {
	if len(old)+len(new) <= maxDiffBytes {
		return old, new
	}
	start, oldEnd, newEnd := changedRegion(old, new)
	old, new = old[start:oldEnd], new[start:newEnd]
	if len(old)+len(new) <= maxDiffBytes {
		return old, new
	}
	return cutAtLine(old, maxDiffBytes/2), cutAtLine(new, maxDiffBytes/2)
}

// changedRegion finds the byte range of old and of new that holds every
// changed line plus diffContext lines on each side; both ranges start at
// the same offset (what precedes it is common).
func changedRegion(old, new string) (start, oldEnd, newEnd int) {
	p := 0 // common prefix, in bytes, ending at a line end
	for i := 0; i < len(old) && i < len(new) && old[i] == new[i]; i++ {
		if old[i] == '\n' {
			p = i + 1
		}
	}
	s := 0 // common suffix, in bytes, starting at a line start, not overlapping the prefix
	for s < len(old)-p && s < len(new)-p && old[len(old)-1-s] == new[len(new)-1-s] {
		s++
	}
	for s > 0 && old[len(old)-s] != '\n' && len(old)-s > p { // back to a line start
		s--
	}
	if s > 0 && old[len(old)-s] == '\n' {
		s-- // the newline ends the last changed line
	}
	start = p
	for n := 0; n < diffContext && start > 0; n++ {
		start = strings.LastIndexByte(old[:start-1], '\n') + 1
	}
	oldEnd, newEnd = len(old)-s, len(new)-s
	for n := 0; n < diffContext && oldEnd < len(old); n++ {
		step := strings.IndexByte(old[oldEnd:], '\n') + 1
		if step == 0 {
			step = len(old) - oldEnd
		}
		oldEnd, newEnd = oldEnd+step, newEnd+step
	}
	return start, oldEnd, newEnd
}

// cutAtLine cuts s to at most max bytes at a line end and says how much
// was left out.
func cutAtLine(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := strings.LastIndexByte(s[:max], '\n') + 1
	if cut == 0 {
		cut = max
		for cut > 0 && s[cut]&0xC0 == 0x80 { // not inside a UTF-8 character
			cut--
		}
	}
	return s[:cut] + fmt.Sprintf("… (%d more bytes not shown)\n", len(s)-cut)
}
