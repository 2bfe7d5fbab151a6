package workspace

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strconv"
	"unicode/utf8"
)

// readLine reads one line from br, newline included, keeping at most keep
// bytes of it in buf (which it reuses) and discarding the rest, so a
// multi-megabyte line costs no memory. n is the line's full length. At the
// end of input it returns n == 0 and the reader's error (io.EOF); a last line
// without a newline comes back with n > 0 and io.EOF.
func readLine(br *bufio.Reader, buf []byte, keep int) (line []byte, n int, err error) {
	buf = buf[:0]
	for {
		chunk, err := br.ReadSlice('\n')
		n += len(chunk)
		if room := keep - len(buf); room > 0 {
			buf = append(buf, chunk[:min(room, len(chunk))]...)
		}
		if err != bufio.ErrBufferFull {
			return buf, n, err
		}
	}
}

// trimEOL drops a trailing "\n" or "\r\n".
func trimEOL(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r"))
}

// appendDisplayLine appends line as valid UTF-8 of at most maxRunes runes,
// marking a cut; cut also says the caller already dropped part of the line.
// Invalid bytes (a Latin-1 file) become U+FFFD so the output stays UTF-8.
func appendDisplayLine(dst, line []byte, maxRunes int, cut bool) []byte {
	if len(line) > maxRunes { // fewer bytes than maxRunes cannot hold more runes
		i, runes := 0, 0
		for i < len(line) && runes < maxRunes {
			_, size := utf8.DecodeRune(line[i:])
			i += size
			runes++
		}
		if i < len(line) {
			line, cut = line[:i], true
		}
	}
	if utf8.Valid(line) {
		dst = append(dst, line...)
	} else {
		dst = append(dst, bytes.ToValidUTF8(line, []byte("\uFFFD"))...)
	}
	if cut {
		dst = append(dst, " [line truncated]"...)
	}
	return dst
}

// appendLineNumber appends n right-aligned in six columns, like cat -n.
func appendLineNumber(dst []byte, n int) []byte {
	var num [20]byte
	digits := strconv.AppendInt(num[:0], int64(n), 10)
	for i := len(digits); i < 6; i++ {
		dst = append(dst, ' ')
	}
	return append(dst, digits...)
}

// ctxReader fails reads once ctx is cancelled, so a huge file, or one huge
// line, stops within one buffer fill.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
