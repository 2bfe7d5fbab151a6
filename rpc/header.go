package rpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"go.lsp.dev/jsonrpc2"
)

// contentLength is the header that starts every frame, lower-cased and with
// its colon: resynchronisation after a malformed header scans for it.
const contentLength = "content-length:"

// errResyncFailed ends a header-framed stream whose input could not be
// resynchronised: no "Content-Length:" within the frame limit.
var errResyncFailed = errors.New("rpc: malformed header and no Content-Length within the frame limit; closing")

// readHeaderFrame reads one LSP header-framed message:
//
//	Content-Length: N\r\n
//	[Other-Header: value\r\n]
//	\r\n
//	N bytes of JSON
//
// Blank lines before a header block are skipped; unknown headers are ignored.
// A malformed header block is answered with -32700 and the stream
// resynchronises on the next "Content-Length:"; if none arrives within s.max
// bytes the stream gives up. A Content-Length over s.max is answered with
// -32600 and its body discarded without being buffered.
func (s *wireStream) readHeaderFrame() (readResult, error) {
	var (
		n      int64
		length int64 = -1
		bad    string
		seen   bool // a header line has been read
	)
	for {
		line, err := s.headerLine()
		n += int64(len(line))
		switch {
		case err == bufio.ErrBufferFull:
			return s.resync(n, "header line too long", nil)
		case err == io.EOF && !seen && isBlank(line):
			return readResult{}, io.EOF
		case err == io.EOF:
			return readResult{}, io.ErrUnexpectedEOF
		case err != nil:
			return readResult{}, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			if !seen {
				continue // blank line between frames
			}
			break
		}
		seen = true
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok || !isToken(name) {
			return s.resync(n, fmt.Sprintf("malformed header line %.64q", line), line)
		}
		if !bytes.EqualFold(name, []byte("Content-Length")) {
			continue
		}
		v, perr := strconv.ParseInt(string(bytes.TrimSpace(value)), 10, 64)
		if perr != nil || v <= 0 {
			bad = fmt.Sprintf("invalid Content-Length %.32q", bytes.TrimSpace(value))
			continue
		}
		length = v
	}

	switch {
	case bad != "":
		return s.resync(n, bad, nil)
	case length < 0:
		return s.resync(n, "missing Content-Length header", nil)
	case length > int64(s.max):
		discarded, err := io.CopyN(io.Discard, s.in, length)
		if err != nil {
			return readResult{}, unexpectedEOF(err)
		}
		return readResult{n: n + discarded, reject: s.tooLarge(length)}, nil
	}
	body := s.growBuffer(int(length), 0)
	if _, err := io.ReadFull(s.in, body); err != nil {
		return readResult{}, unexpectedEOF(err)
	}
	return readResult{body: body, n: n + length}, nil
}

// headerLine returns the next header line, ending in '\n': a pending line
// left by resync first, then lines read from s.in.
func (s *wireStream) headerLine() ([]byte, error) {
	if line := s.pending; line != nil {
		s.pending = nil
		return line, nil
	}
	return s.in.ReadSlice('\n')
}

// resync answers a malformed header block at once (the peer may be waiting
// for that answer before it sends more), then skips input up to the next
// "Content-Length:" (matched case-insensitively, anywhere: the previous body
// need not end with a newline), leaving the reader positioned at that header
// line so the next readHeaderFrame starts cleanly. It returns a skip result.
//
// bad is the malformed line already consumed, if any: the next header may
// start inside it (garbage glued to a header).
func (s *wireStream) resync(n int64, reason string, bad []byte) (readResult, error) {
	rej := &rejection{code: jsonrpc2.ParseError, message: "invalid header: " + reason}
	if err := s.answer(rej); err != nil {
		return readResult{}, err
	}
	if i := indexFold(bad, contentLength); i > 0 {
		s.pending = append([]byte(nil), bad[i:]...)
		return readResult{n: n, skip: true}, nil
	}
	for skipped := 0; skipped <= s.max; {
		// Look for the header in what is buffered; keep the tail that could
		// be the start of a match.
		window, _ := s.in.Peek(s.in.Buffered())
		if len(window) == 0 {
			if _, err := s.in.Peek(1); err != nil {
				return readResult{}, err
			}
			continue
		}
		if i := indexFold(window, contentLength); i >= 0 {
			_, _ = s.in.Discard(i)
			return readResult{n: n + int64(skipped+i), skip: true}, nil
		}
		drop := len(window) - (len(contentLength) - 1)
		if drop <= 0 {
			// Too little buffered to decide: wait for more input.
			if _, err := s.in.Peek(len(window) + 1); err != nil {
				return readResult{}, err
			}
			continue
		}
		_, _ = s.in.Discard(drop)
		skipped += drop
	}
	return readResult{}, errResyncFailed
}

// indexFold returns the index of the first case-insensitive occurrence of
// lower (which must be lower case ASCII) in b, or -1.
func indexFold(b []byte, lower string) int {
	for i := 0; i+len(lower) <= len(b); i++ {
		if bytes.EqualFold(b[i:i+len(lower)], []byte(lower)) {
			return i
		}
	}
	return -1
}

// isToken reports whether name is a valid header field name (RFC 9110 token).
func isToken(name []byte) bool {
	if len(name) == 0 {
		return false
	}
	for _, c := range name {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), c) >= 0:
		default:
			return false
		}
	}
	return true
}

// unexpectedEOF turns a plain EOF inside a frame into io.ErrUnexpectedEOF.
func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
