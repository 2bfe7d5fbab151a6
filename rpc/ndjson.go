package rpc

import (
	"bufio"
	"io"
)

// readLine reads one newline-delimited frame. A line that fits the bufio
// window is returned in place; a longer one is accumulated in s.buf up to
// s.max bytes, and past that it is discarded chunk by chunk to the next
// newline and rejected, so an oversized line never costs more than s.max bytes
// of memory.
//
// A final line without a newline at end of input is still treated as a frame
// (`printf '{...}' | nc -U` works); end of input at a frame boundary is
// io.EOF.
func (s *wireStream) readLine() (readResult, error) {
	line, err := s.in.ReadSlice('\n')
	switch err {
	case nil:
		return s.lineResult(line[:len(line)-1], int64(len(line))), nil
	case io.EOF:
		if len(line) == 0 || isBlank(line) {
			return readResult{}, io.EOF
		}
		return s.lineResult(line, int64(len(line))), nil
	case bufio.ErrBufferFull:
		return s.readLongLine(line)
	default:
		return readResult{}, err
	}
}

// lineResult turns a complete line into a frame, or a rejection when it is
// over the limit.
func (s *wireStream) lineResult(body []byte, n int64) readResult {
	if len(body) > s.max {
		return readResult{n: n, reject: s.tooLarge(int64(len(body)))}
	}
	return readResult{body: body, n: n}
}

// readLongLine continues a line that filled the bufio window. prefix is the
// window's content, valid only until the next read from s.in.
func (s *wireStream) readLongLine(prefix []byte) (readResult, error) {
	total := int64(len(prefix))
	if total > int64(s.max) {
		return s.discardLine(total)
	}
	buf := s.growBuffer(len(prefix), 0)
	copy(buf, prefix)
	for {
		chunk, err := s.in.ReadSlice('\n')
		total += int64(len(chunk))
		switch err {
		case nil, io.EOF:
			body := chunk
			if err == nil {
				body = chunk[:len(chunk)-1]
			}
			size := len(buf) + len(body)
			if size > s.max {
				return readResult{n: total, reject: s.tooLarge(int64(size))}, nil
			}
			buf = s.growBuffer(size, len(buf))
			copy(buf[size-len(body):], body)
			return readResult{body: buf, n: total}, nil
		case bufio.ErrBufferFull:
			size := len(buf) + len(chunk)
			if size > s.max {
				// Over the limit: stop buffering, drop what we have.
				return s.discardLine(total)
			}
			buf = s.growBuffer(size, len(buf))
			copy(buf[size-len(chunk):], chunk)
		default:
			return readResult{}, err
		}
	}
}

// discardLine skips the rest of an oversized line, whose first seen bytes have
// already been read, and rejects it with its full size.
func (s *wireStream) discardLine(seen int64) (readResult, error) {
	total := seen
	for {
		chunk, err := s.in.ReadSlice('\n')
		total += int64(len(chunk))
		switch err {
		case nil:
			return readResult{n: total, reject: s.tooLarge(total - 1)}, nil
		case io.EOF:
			return readResult{n: total, reject: s.tooLarge(total)}, nil
		case bufio.ErrBufferFull:
			continue
		default:
			return readResult{}, err
		}
	}
}

// isBlank reports whether b holds only JSON whitespace.
func isBlank(b []byte) bool {
	for _, c := range b {
		if !isJSONSpace(c) {
			return false
		}
	}
	return true
}
