package rpc

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// bigRequest is a valid echo call of exactly size bytes (without framing).
func bigRequest(size int) string {
	head := `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"s":"`
	tail := `"}}`
	return head + strings.Repeat("x", size-len(head)-len(tail)) + tail
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestOversizedMessageRejectedWithoutBuffering(t *testing.T) {
	const size = 9 << 20 // 9 MiB
	cases := []struct {
		name    string
		framing Framing
		limit   int // 0: DefaultMaxMessage
	}{
		{"ndjson default limit", FramingNDJSON, 0},
		{"ndjson 1MiB limit", FramingNDJSON, 1 << 20},
		{"header default limit", FramingHeader, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			limit := tc.limit
			if limit == 0 {
				limit = DefaultMaxMessage
			}
			client, server := net.Pipe()
			get := serve(t, server, newTestMux(t).Mux, tc.limit)
			p := newRawPeer(t, client, tc.framing)
			p.expectEcho(1)

			body := bigRequest(size)
			// Send in chunks, as a socket would deliver it.
			framed := body + "\n"
			if tc.framing == FramingHeader {
				framed = "Content-Length: " + itoa(len(body)) + "\r\n\r\n" + body
			}
			for off := 0; off < len(framed); off += 1 << 20 {
				p.raw(framed[off:min(off+1<<20, len(framed))])
			}
			r := p.expectError(jsonrpc2.InvalidRequest, "null")
			want := fmt.Sprintf("message too large (%d bytes, limit %d)", size, limit)
			if r.Error.Message != want {
				t.Fatalf("message %q, want %q", r.Error.Message, want)
			}
			p.expectEcho(2)

			s := get().stream
			if peak := s.peakBuf.Load(); peak > int64(limit) {
				t.Fatalf("read buffer peaked at %d bytes, over the %d limit: the oversized frame was buffered", peak, limit)
			}
			if tc.framing == FramingHeader && s.peakBuf.Load() > 4096 {
				t.Fatalf("header framing buffered %d bytes of a body it knew was too large", s.peakBuf.Load())
			}
			if c := s.bufCap.Load(); c > maxRetainedBuffer {
				t.Fatalf("read buffer kept %d bytes after the oversized frame", c)
			}
		})
	}
}

func TestLargeValidMessageUnderLimit(t *testing.T) {
	for _, framing := range []Framing{FramingNDJSON, FramingHeader} {
		t.Run(framing.String(), func(t *testing.T) {
			client, server := net.Pipe()
			get := serve(t, server, newTestMux(t).Mux, 0)
			p := newRawPeer(t, client, framing)
			body := bigRequest(3 << 20)
			p.frame(body)
			r := p.recv()
			if r.Error != nil {
				t.Fatalf("error %d %q", r.Error.Code, r.Error.Message)
			}
			if len(r.Result) != len(body)-len(`{"jsonrpc":"2.0","id":1,"method":"echo","params":`)-1 {
				t.Fatalf("result of %d bytes", len(r.Result))
			}
			p.expectEcho(2)
			if c := get().stream.bufCap.Load(); c > maxRetainedBuffer {
				t.Fatalf("read buffer kept %d bytes after a large frame", c)
			}
		})
	}
}

func TestOversizedAtExactLimit(t *testing.T) {
	const limit = 100 << 10
	client, server := net.Pipe()
	serve(t, server, newTestMux(t).Mux, limit)
	p := newRawPeer(t, client, FramingNDJSON)
	p.frame(bigRequest(limit)) // exactly at the limit: accepted
	if r := p.recv(); r.Error != nil {
		t.Fatalf("at limit: %q", r.Error.Message)
	}
	p.frame(bigRequest(limit + 1))
	p.expectError(jsonrpc2.InvalidRequest, "null")
	p.frame(bigRequest(1000)) // small, fits the bufio window
	if r := p.recv(); r.Error != nil {
		t.Fatalf("small: %q", r.Error.Message)
	}
}
