package rpc

import (
	"bufio"
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
// decided once, from the first byte a peer sends, and holds for the life of
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
// Detection peeks, without consuming, at the first non-whitespace byte: '{' or
// '[' selects newline-delimited JSON, 'C' or 'c' (Content-Length) selects
// header framing. Anything else selects NDJSON too: the stream then answers
// the garbage line with a -32700 parse error and keeps serving. Detection
// blocks until the peer sends its first byte; to abandon it, close conn. It
// fails only when reading the first byte fails (for example the peer hung up
// without sending anything).
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

// detectFraming peeks at in until it finds a non-whitespace byte and picks the
// framing from it. Whitespace stays buffered: on NDJSON, blank lines are
// answered like any other empty frame; on header framing, leading blank lines
// are skipped.
func detectFraming(in *bufio.Reader) (Framing, error) {
	for i := 0; i < readBufferSize; i++ {
		b, err := in.Peek(i + 1)
		if err != nil {
			return 0, err
		}
		switch c := b[i]; {
		case isJSONSpace(c):
			continue
		case c == 'C' || c == 'c':
			return FramingHeader, nil
		default:
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
