package rpc

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"go.lsp.dev/jsonrpc2"
)

// DefaultMaxMessage is the largest frame, in bytes, a server stream accepts
// when NewServerStream is given a maxMessage of zero or less: 8 MiB. A larger
// frame is answered with -32600 ("message too large") and skipped; the
// connection keeps serving.
const DefaultMaxMessage = 8 << 20

// readBufferSize is the size of the buffered reader under every stream. A
// frame that fits is validated in place, without a copy.
const readBufferSize = 64 << 10

// Framing names how JSON-RPC messages are delimited on one connection. It is
// decided once, from the first line a peer sends, and holds for the life of
// the connection.
type Framing int

const (
	// FramingNDJSON is newline-delimited JSON: one compact JSON value per
	// line. ACP clients and `hearth acp` use it.
	FramingNDJSON Framing = iota + 1
	// FramingHeader is LSP base-protocol framing: a "Content-Length: N"
	// header block, a blank line, then N bytes of JSON. Clients built on LSP
	// libraries use it.
	FramingHeader
)

// String returns "ndjson" or "header".
func (f Framing) String() string {
	switch f {
	case FramingNDJSON:
		return "ndjson"
	case FramingHeader:
		return "header"
	default:
		return fmt.Sprintf("Framing(%d)", int(f))
	}
}

// NewServerStream detects the framing a freshly accepted connection speaks and
// returns a validating jsonrpc2.Stream over it, owning conn (closing the stream
// closes conn).
//
// Detection peeks, without consuming, at the first non-whitespace bytes: a
// first line that starts with an LSP header name ("Content-Length:", any
// case) selects header framing; anything else selects newline-delimited
// JSON, whose reader answers a junk line with a -32700 parse error and keeps
// serving. Detection blocks until the peer has sent enough to decide (one
// byte, unless the input so far spells the start of a header name); to
// abandon it, close conn. It fails only when the peer hangs up before
// sending anything but whitespace.
//
// maxMessage bounds one frame in bytes; zero or less means DefaultMaxMessage.
func NewServerStream(conn io.ReadWriteCloser, maxMessage int) (jsonrpc2.Stream, Framing, error) {
	if maxMessage <= 0 {
		maxMessage = DefaultMaxMessage
	}
	in := bufio.NewReaderSize(conn, readBufferSize)
	framing, err := detectFraming(in)
	if err != nil {
		return nil, 0, fmt.Errorf("rpc: detect framing: %w", err)
	}
	return newWireStream(conn, in, framing, maxMessage), framing, nil
}

// NewClientStream returns a validating newline-delimited JSON stream over conn
// for the client side of a connection (hearth's CLI and relay talk NDJSON to
// the daemon). It owns conn and accepts frames up to DefaultMaxMessage.
func NewClientStream(conn io.ReadWriteCloser) jsonrpc2.Stream {
	in := bufio.NewReaderSize(conn, readBufferSize)
	return newWireStream(conn, in, FramingNDJSON, DefaultMaxMessage)
}

// headerNames are the LSP base-protocol header fields, lower-cased with their
// colon, that may open a header-framed stream. LSP names Content-Length
// (required) and Content-Type (optional) and fixes no order, so either one
// as the first line selects header framing.
var headerNames = []string{contentLength, "content-type:"}

// detectFraming peeks at in, skipping JSON whitespace, and picks header
// framing only when the first line starts with an LSP header name
// ("Content-Length:", matched case-insensitively as LSP says header names
// are); anything else is NDJSON, whose reader answers a junk line with -32700
// and keeps serving. A first byte of 'C' alone decides nothing: `cat` typed
// into `hearth acp` is a junk NDJSON line, not a header.
//
// It peeks one byte at a time and decides as soon as the input stops
// matching a header name, so a peer that sends a short line and waits for
// the answer is never left waiting on detection. Whitespace stays buffered:
// on NDJSON, blank lines are answered like any other empty frame; on header
// framing, leading blank lines are skipped.
func detectFraming(in *bufio.Reader) (Framing, error) {
	start := -1 // index of the first non-whitespace byte
	for i := 0; i < readBufferSize; i++ {
		b, err := in.Peek(i + 1)
		if err != nil {
			if start >= 0 && i > start {
				// The peer sent part of a header name and hung up: not a
				// header stream; the NDJSON reader sees the fragment.
				return FramingNDJSON, nil
			}
			return 0, err
		}
		c := b[i]
		if start < 0 {
			if isJSONSpace(c) {
				continue
			}
			start = i
		}
		prefix := b[start : i+1]
		matching := false
		for _, name := range headerNames {
			if len(prefix) <= len(name) && bytes.EqualFold(prefix, []byte(name[:len(prefix)])) {
				if len(prefix) == len(name) {
					return FramingHeader, nil
				}
				matching = true
			}
		}
		if !matching {
			// '{' and '[' are JSON; anything else is answered with -32700 by
			// the NDJSON reader, which is the framing a confused peer most
			// likely speaks.
			return FramingNDJSON, nil
		}
	}
	// A whole buffer of whitespace: NDJSON, whose reader answers each blank line.
	return FramingNDJSON, nil
}

// isJSONSpace reports whether c is JSON insignificant whitespace.
func isJSONSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n'
}
