package watch

import (
	"bytes"
	"unicode/utf8"
)

// What the context delta and the workspace's file tools agree on, so the
// delta shows a file as read_file would: when it is text, and how much of
// it is read.

// SniffLen is how much of a file decides whether it is text.
const SniffLen = 8 << 10

// IsBinary reports whether head, the first bytes of a file, looks like
// binary data: a NUL byte (which no text encoding we show uses outside
// UTF-16), or mostly bytes that are not UTF-8. Sparse invalid bytes, as in a
// Latin-1 file, still count as text and are shown as U+FFFD. complete says
// head is the whole file; otherwise a rune cut at its end is not held against it.
func IsBinary(head []byte, complete bool) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	invalid, n := 0, 0
	for n < len(head) {
		r, size := utf8.DecodeRune(head[n:])
		if r == utf8.RuneError && size == 1 {
			if !complete && !utf8.FullRune(head[n:]) {
				break
			}
			invalid++
		}
		n += size
	}
	// "Mostly": random data is about half invalid bytes; text in a legacy
	// encoding is far below a third.
	return n > 0 && invalid*3 > n
}

// MaxContent bounds the text a read_file keeps in Result.Content.
const MaxContent = 256 << 10

// ReadWholeMax is the largest file read_file reads to its end whatever
// part it shows: it counts the lines and hashes the whole text for the read
// set (the context delta then tells a change from a touch). A larger file
// is read only as far as the lines shown, so a read of three lines of a
// file of gigabytes costs three lines: its output gives the file's size
// instead of its line count, and it has no Hash (the read set cannot follow
// it; the delta names it when it changes).
const ReadWholeMax = 16 << 20
