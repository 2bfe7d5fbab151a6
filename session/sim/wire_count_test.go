package sim

import (
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// The same large, repetitive request costs far fewer wire bytes with permessage-deflate.
func TestWireBytesShowCompression(t *testing.T) {
	input := strings.Repeat("the same words, over and over again. ", 8000) // ~300 KB
	in := map[bool]int64{}
	for _, compress := range []bool{false, true} {
		srv, base := newSim(t, Options{})
		d := websocket.Dialer{EnableCompression: compress, HandshakeTimeout: ioTimeout}
		conn, _, err := d.Dial(wsURL(base), nil)
		if err != nil {
			t.Fatal(err)
		}
		c := &client{t: t, conn: conn}
		completed(t, c.create(map[string]any{"generate": false, "input": input}))
		conn.Close()
		rec := waitRecs(t, srv, 1)[0]
		if rec.Compressed != compress {
			t.Fatalf("compress=%v: Received.Compressed %v", compress, rec.Compressed)
		}
		var out int64
		in[compress], out = srv.WireBytes()
		if out == 0 {
			t.Fatalf("compress=%v: no bytes written", compress)
		}
	}
	if in[false] < int64(len(input)) || in[false] < 20*in[true] {
		t.Fatalf("wire bytes in: %d uncompressed, %d compressed (input %d bytes)", in[false], in[true], len(input))
	}
}
