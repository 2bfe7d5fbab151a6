package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/hearthd/hearth/session/wsdeflate"
)

// dialDeflate dials the server with gorilla: over wsdeflate's client (takeover offered) when
// takeover is set, else with gorilla's own compression (no takeover offered) when gorillaDeflate
// is set, else offering nothing.
func dialDeflate(t *testing.T, base string, takeover, gorillaDeflate bool) *client {
	t.Helper()
	d := websocket.Dialer{HandshakeTimeout: ioTimeout, EnableCompression: gorillaDeflate}
	if takeover {
		d.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			var nd net.Dialer
			conn, err := nd.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return wsdeflate.Client(conn, wsdeflate.Options{}), nil
		}
	}
	conn, _, err := d.Dial(wsURL(base), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &client{t: t, conn: conn}
}

// Each mode answers each kind of client as RFC 7692 says, the frames go through either way, and
// the records' wire bytes show what takeover saves on a request that repeats its tools.
func TestDeflateModes(t *testing.T) {
	var tb strings.Builder
	tb.WriteString("[")
	for i := range 60 { // a tool list as varied as a real one: names, words and numbers differ
		fmt.Fprintf(&tb, `{"type":"function","name":"tool_%x","description":"%s %d","parameters":{"type":"object"}},`, i*2654435761, strings.Repeat(string(rune('a'+i%26)), 1+i%7), i*i*977)
	}
	tools := tb.String() + `{"type":"function","name":"x"}]`
	cases := []struct {
		mode               DeflateMode
		takeover, gorilla  bool
		extension          string
		maxPerReq, minPerR int64
	}{
		{DeflateTakeover, true, false, "permessage-deflate", 200, 0},
		{DeflateTakeover, false, true, "permessage-deflate; server_no_context_takeover; client_no_context_takeover", 3000, 800},
		{DeflateTakeover, false, false, "", 1 << 20, 4000},
		{DeflateNoTakeover, true, false, "permessage-deflate; server_no_context_takeover; client_no_context_takeover", 3000, 800},
		{DeflateOff, true, false, "", 1 << 20, 4000},
	}
	for _, tc := range cases {
		srv, base := newSim(t, Options{Deflate: tc.mode})
		c := dialDeflate(t, base, tc.takeover, tc.gorilla)
		const n = 6
		for i := range n {
			fields := map[string]any{"model": "m", "tools": json.RawMessage(tools), "input": "call " + strings.Repeat("x", i)}
			completed(t, c.create(fields))
		}
		recs := waitRecs(t, srv, n)
		if recs[0].Extension != tc.extension || recs[0].Compressed != (tc.extension != "") {
			t.Errorf("%v, client takeover=%v gorilla=%v: extension %q compressed %v, want %q", tc.mode, tc.takeover, tc.gorilla, recs[0].Extension, recs[0].Compressed, tc.extension)
		}
		var in int64
		for _, r := range recs[1:] {
			in += r.WireIn
		}
		per := in / (n - 1)
		if per > tc.maxPerReq || per < tc.minPerR {
			t.Errorf("%v, client takeover=%v gorilla=%v: %d wire bytes in per request, want %d to %d", tc.mode, tc.takeover, tc.gorilla, per, tc.minPerR, tc.maxPerReq)
		}
		t.Logf("%v, client takeover=%v gorilla=%v: %q, %d bytes in per request (%d in JSON)", tc.mode, tc.takeover, tc.gorilla, recs[0].Extension, per, recs[1].Bytes)
	}
}
