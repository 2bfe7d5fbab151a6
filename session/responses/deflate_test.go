package responses

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hearthd/hearth/session/sim"
)

// deflateTools is a tool list of some 6 KB, as varied as a real one.
func deflateTools() json.RawMessage {
	var b strings.Builder
	b.WriteString("[")
	for i := range 40 {
		fmt.Fprintf(&b, `{"type":"function","name":"tool_%x","description":"%s %d","parameters":{"type":"object"}},`, i*2654435761, strings.Repeat(string(rune('a'+i%26)), 1+i%7), i*i*977)
	}
	b.WriteString(`{"type":"function","name":"x"}]`)
	return json.RawMessage(b.String())
}

// creates runs n creates with the same settings on one lane of c and
// returns each answer's text.
func creates(t *testing.T, c *Client, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	link, err := c.Link(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for i := range n {
		if err := link.Acquire(ctx, ""); err != nil {
			t.Fatal(err)
		}
		msg, _ := json.Marshal(map[string]any{"type": "message", "role": "user", "content": fmt.Sprintf("say something %d sim:tokens=300", i)})
		frame, err := Create{Type: "response.create", Settings: Settings{Model: "m", Tools: deflateTools()}, Input: []json.RawMessage{msg}}.Frame()
		if err != nil {
			t.Fatal(err)
		}
		st, err := link.Send(ctx, "", frame)
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		for first := true; ; first = false {
			e, err := st.Next(ctx, first, 20*time.Second, 20*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if e.Type == "response.output_text.delta" {
				text.WriteString(e.Delta)
			}
			if e.Terminal() {
				if _, err := st.End(e); err != nil {
					t.Fatal(err)
				}
				break
			}
		}
		texts = append(texts, text.String())
	}
	return texts
}

// The client compresses with context takeover when the server accepts it,
// honours a server that refuses takeover, and runs uncompressed when the
// server refuses the extension; the answers are the same every way.
func TestDeflateNegotiation(t *testing.T) {
	cases := []struct {
		mode      sim.DeflateMode
		off       bool // the client's DisableCompression
		extension string
	}{
		{sim.DeflateTakeover, false, "permessage-deflate"},
		{sim.DeflateNoTakeover, false, "permessage-deflate; server_no_context_takeover; client_no_context_takeover"},
		{sim.DeflateOff, false, ""},
		{sim.DeflateTakeover, true, ""},
	}
	const n = 6
	in, out := map[string]int64{}, map[string]int64{}
	var want []string
	for _, tc := range cases {
		srv := sim.New(sim.Options{Deflate: tc.mode, Reasoning: sim.ReasoningNever})
		base, err := srv.Start()
		if err != nil {
			t.Fatal(err)
		}
		c := NewClient(Config{BaseURL: base, Lanes: LanesOn, DisableCompression: tc.off}.WithDefaults(), nil, nil)
		texts := creates(t, c, 1) // the handshake and the first request
		first := c.Stats()
		texts = append(texts, creates(t, c, n)...)
		last := c.Stats()
		c.Close()
		srv.Close()
		if want == nil {
			want = texts
		} else if strings.Join(texts, "|") != strings.Join(want, "|") {
			t.Errorf("%v off=%v: the answers differ", tc.mode, tc.off)
		}
		recs := srv.Received()
		if recs[0].Extension != tc.extension {
			t.Errorf("%v off=%v: negotiated %q, want %q", tc.mode, tc.off, recs[0].Extension, tc.extension)
		}
		key := fmt.Sprintf("%v off=%v", tc.mode, tc.off)
		in[key] = (last.WireSent - first.WireSent) / n
		out[key] = (last.WireReceived - first.WireReceived) / n
		t.Logf("%s: %q, per request %d bytes sent (%d JSON), %d received", key, tc.extension, in[key], recs[1].Bytes, out[key])
	}
	take, none, plain := "takeover off=false", "no-takeover off=false", "off off=false"
	if in[take] > 200 || in[take]*4 > in[none] || in[none]*3 > in[plain] {
		t.Errorf("bytes per request in: takeover %d, no takeover %d, uncompressed %d", in[take], in[none], in[plain])
	}
	if out[take] >= out[none] || out[none] >= out[plain] {
		t.Errorf("bytes per answer out: takeover %d, no takeover %d, uncompressed %d", out[take], out[none], out[plain])
	}
}

// connectProxy is an HTTP CONNECT proxy that checks its credentials and
// counts the tunnels it opened.
func connectProxy(t *testing.T, user, pass string) (*url.URL, *atomic.Int64) {
	t.Helper()
	var tunnels atomic.Int64
	var wg sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		if u, p, ok := parseProxyAuth(r.Header.Get("Proxy-Authorization")); !ok || u != user || p != pass {
			http.Error(w, "who", http.StatusProxyAuthRequired)
			return
		}
		up, err := net.Dial("tcp", r.Host)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		down, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			up.Close()
			return
		}
		tunnels.Add(1)
		io.WriteString(down, "HTTP/1.1 200 Connection established\r\n\r\n")
		wg.Add(2)
		go func() { defer wg.Done(); io.Copy(up, brw.Reader); up.(*net.TCPConn).CloseWrite() }()
		go func() { defer wg.Done(); io.Copy(down, up); down.Close() }()
	}))
	t.Cleanup(func() { srv.Close(); wg.Wait() })
	u, _ := url.Parse(srv.URL)
	u.User = url.UserPassword(user, pass)
	return u, &tunnels
}

func parseProxyAuth(h string) (user, pass string, ok bool) {
	r := &http.Request{Header: http.Header{"Authorization": {h}}}
	return r.BasicAuth()
}

// Through an HTTP proxy the client tunnels with CONNECT (its credentials
// from the proxy's URL) and still negotiates takeover; over wss it speaks
// TLS itself, under the extension.
func TestDeflateThroughProxyAndTLS(t *testing.T) {
	srv := sim.New(sim.Options{Reasoning: sim.ReasoningNever})
	defer srv.Close()
	for _, tlsOn := range []bool{false, true} {
		var hs *httptest.Server
		if tlsOn {
			hs = httptest.NewTLSServer(srv)
		} else {
			hs = httptest.NewServer(srv)
		}
		proxy, tunnels := connectProxy(t, "u", "p w")
		cfg := Config{BaseURL: hs.URL + "/v1", HandshakeTimeout: 10 * time.Second}.WithDefaults()
		if tlsOn {
			cfg.rootCAs = hs.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
		}
		wsu, err := cfg.websocketURL()
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(wsu)
		var k counters
		d := wsDialer(cfg, u, func(*http.Request) (*url.URL, error) { return proxy, nil }, &k, nil)
		ws, _, err := d.Dial(wsu, nil)
		if err != nil {
			t.Fatalf("tls=%v: dial through the proxy: %v", tlsOn, err)
		}
		frame, _ := Create{Type: "response.create", Settings: Settings{Model: "m", Tools: deflateTools()}, Input: []json.RawMessage{json.RawMessage(`{"type":"message","role":"user","content":"hi"}`)}}.Frame()
		if err := ws.WriteMessage(1, frame); err != nil {
			t.Fatal(err)
		}
		for {
			_, data, err := ws.ReadMessage()
			if err != nil {
				t.Fatalf("tls=%v: %v", tlsOn, err)
			}
			if strings.Contains(string(data), `"response.completed"`) {
				break
			}
		}
		ws.Close()
		hs.Close()
		if tunnels.Load() != 1 {
			t.Errorf("tls=%v: %d tunnels through the proxy, want 1", tlsOn, tunnels.Load())
		}
		if k.wireSent.Load() == 0 {
			t.Errorf("tls=%v: no bytes counted", tlsOn)
		}
	}
	for _, r := range srv.Received() {
		if r.Extension != "permessage-deflate" {
			t.Errorf("negotiated %q through the proxy, want takeover", r.Extension)
		}
	}
}
