package daemon

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// minimalClient is the least any client of the WebSocket mode does per
// round trip: read a response's events to its end, take the call id, send
// the next request. It reuses a request hearth sent (tmpl) for everything
// else, so that the server parses frames of the same size, with the same
// compression. BenchmarkRoundTrip runs it beside hearth: what hearth takes
// above it is hearth's own; the rest is the loopback, the WebSocket stacks
// and this machine's wake-ups, which no client avoids.
type minimalClient struct {
	conn *websocket.Conn
	tmpl map[string]json.RawMessage
	out  json.RawMessage // the output of every call: hearth's, as it sent it
}

func dialMinimal(b *testing.B, base string, tmpl map[string]json.RawMessage, out json.RawMessage) *minimalClient {
	d := websocket.Dialer{EnableCompression: true, HandshakeTimeout: 10 * time.Second}
	conn, _, err := d.Dial("ws"+strings.TrimPrefix(base, "http")+"/responses", nil)
	if err != nil {
		b.Fatal(err)
	}
	return &minimalClient{conn: conn, tmpl: tmpl, out: out}
}

// turn runs one prompt's tool loop to its end.
func (m *minimalClient) turn(b *testing.B, prompt string) {
	user, _ := json.Marshal([]map[string]any{{"type": "message", "role": "user", "content": []map[string]string{{"type": "input_text", "text": prompt}}}})
	req := m.request("", user)
	for {
		if err := m.conn.WriteMessage(websocket.TextMessage, req); err != nil {
			b.Fatal(err)
		}
		var id string
		var calls []string
		for id == "" {
			_, data, err := m.conn.ReadMessage()
			if err != nil {
				b.Fatal(err)
			}
			var e struct {
				Type     string `json:"type"`
				Response struct {
					ID     string `json:"id"`
					Output []struct {
						Type   string `json:"type"`
						CallID string `json:"call_id"`
					} `json:"output"`
				} `json:"response"`
			}
			if err := json.Unmarshal(data, &e); err != nil {
				b.Fatal(err)
			}
			switch e.Type {
			case "response.completed":
				id = e.Response.ID
				for _, it := range e.Response.Output {
					if it.Type == "function_call" {
						calls = append(calls, it.CallID)
					}
				}
			case "response.failed", "response.incomplete", "error":
				b.Fatalf("minimal client: %s", data)
			}
		}
		if len(calls) == 0 {
			return
		}
		var input []json.RawMessage
		for _, c := range calls {
			it, _ := json.Marshal(map[string]any{"type": "function_call_output", "call_id": c, "output": m.out})
			input = append(input, it)
		}
		items, _ := json.Marshal(input)
		req = m.request(id, items)
	}
}

func (m *minimalClient) request(prev string, input json.RawMessage) []byte {
	f := make(map[string]json.RawMessage, len(m.tmpl))
	for k, v := range m.tmpl {
		f[k] = v
	}
	delete(f, "stream_id")
	delete(f, "previous_response_id")
	if prev != "" {
		f["previous_response_id"], _ = json.Marshal(prev)
	}
	f["input"] = input
	b, _ := json.Marshal(f)
	return b
}

// hearthFrame runs one short hearth turn and returns one of its incremental
// requests (as fields) and the output its read carried.
func hearthFrame(b *testing.B, calls int) (map[string]json.RawMessage, json.RawMessage) {
	td, ed, id := roundTripSession()
	defer td.d.Close()
	before := len(td.sim.Received())
	ed.prompt(id, fmt.Sprintf(`go sim:calls=2 sim:parallel=%d sim:tool=read_file sim:args={"path":"big.txt"}`, calls))
	rec := td.sim.Received()[before+1]
	var f map[string]json.RawMessage
	var in []struct {
		Output json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal(rec.Raw, &f); err != nil || json.Unmarshal(f["input"], &in) != nil || len(in) == 0 {
		b.Fatalf("hearth's request: %s", rec.Raw)
	}
	return f, in[0].Output
}
