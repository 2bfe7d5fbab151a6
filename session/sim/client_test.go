package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// This file is the tests' own minimal Responses client: gorilla on one side, raw JSON checks.

const ioTimeout = 5 * time.Second

type apiErr struct {
	Type    string  `json:"type"`
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Param   *string `json:"param"`
}

type usageObj struct {
	InputTokens        int `json:"input_tokens"`
	OutputTokens       int `json:"output_tokens"`
	TotalTokens        int `json:"total_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
}

type responseObj struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	Status             string            `json:"status"`
	Model              string            `json:"model"`
	Output             []json.RawMessage `json:"output"`
	Usage              *usageObj         `json:"usage"`
	PreviousResponseID *string           `json:"previous_response_id"`
	IncompleteDetails  *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error *apiErr `json:"error"`
}

type outItem struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Role      string `json:"role"`
	Status    string `json:"status"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Input     string `json:"input"`
	Content   []struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Annotations []any  `json:"annotations"`
	} `json:"content"`
}

// event is any server event; fields absent from a type stay zero.
type event struct {
	Type      string       `json:"type"`
	Seq       *int         `json:"sequence_number"`
	StreamID  *string      `json:"stream_id"`
	Status    int          `json:"status"`
	Error     *apiErr      `json:"error"`
	Code      string       `json:"code"`    // flat SSE error
	Message   string       `json:"message"` // flat SSE error
	Response  *responseObj `json:"response"`
	Delta     string       `json:"delta"`
	Text      string       `json:"text"`
	Arguments string       `json:"arguments"`
	Input     string       `json:"input"` // response.custom_tool_call_input.done
	Item      *outItem     `json:"item"`
	raw       []byte
}

func (e event) lane() string {
	if e.StreamID == nil {
		return ""
	}
	return *e.StreamID
}

func isTerminal(typ string) bool {
	switch typ {
	case "response.completed", "response.failed", "response.incomplete", "error":
		return true
	}
	return false
}

func newSim(t *testing.T, opts Options) (*Server, string) {
	t.Helper()
	srv := New(opts)
	base, err := srv.Start()
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, base
}

func wsURL(base string) string { return "ws" + strings.TrimPrefix(base, "http") + "/responses" }

type client struct {
	t    *testing.T
	conn *websocket.Conn
}

func dialRaw(base string, header http.Header) (*websocket.Conn, *http.Response, error) {
	d := websocket.Dialer{HandshakeTimeout: ioTimeout}
	return d.Dial(wsURL(base), header)
}

func dial(t *testing.T, base string) *client {
	t.Helper()
	conn, _, err := dialRaw(base, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return &client{t: t, conn: conn}
}

func (c *client) send(v any) {
	c.t.Helper()
	if err := c.conn.WriteJSON(v); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

// next reads one frame: its type, bytes and error.
func (c *client) next() (int, []byte, error) {
	_ = c.conn.SetReadDeadline(time.Now().Add(ioTimeout))
	return c.conn.ReadMessage()
}

func (c *client) read() event {
	c.t.Helper()
	mt, data, err := c.next()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	if mt != websocket.TextMessage {
		c.t.Fatalf("read: frame type %d, want text", mt)
	}
	return decode(c.t, data)
}

func decode(t *testing.T, data []byte) event {
	t.Helper()
	var e event
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatalf("decode %q: %v", data, err)
	}
	e.raw = data
	return e
}

// untilTerminal reads events until one terminal event arrives.
func (c *client) untilTerminal() []event {
	c.t.Helper()
	var evs []event
	for {
		e := c.read()
		evs = append(evs, e)
		if isTerminal(e.Type) {
			return evs
		}
	}
}

// create sends a response.create built from fields and returns its events up to the terminal one.
func (c *client) create(fields map[string]any) []event {
	c.t.Helper()
	fields["type"] = "response.create"
	c.send(fields)
	return c.untilTerminal()
}

// closeCode reads until the connection ends and returns the close code: the peer's, or
// websocket.CloseAbnormalClosure (1006) when it ended without a close frame, -1 on other errors.
func (c *client) closeCode() int {
	c.t.Helper()
	for {
		_, _, err := c.next()
		if err == nil {
			continue
		}
		if ce, ok := err.(*websocket.CloseError); ok {
			return ce.Code
		}
		return -1
	}
}

func userMsg(text string) map[string]any {
	return map[string]any{"type": "message", "role": "user",
		"content": []any{map[string]any{"type": "input_text", "text": text}}}
}

func fnTool(name string) map[string]any {
	return map[string]any{"type": "function", "name": name, "description": "test tool",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}}
}

func last(evs []event) event { return evs[len(evs)-1] }

func types(evs []event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

// textOf concatenates the output_text deltas.
func textOf(evs []event) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Type == "response.output_text.delta" {
			b.WriteString(e.Delta)
		}
	}
	return b.String()
}

// completed returns the response of a response.completed terminal event, failing otherwise.
func completed(t *testing.T, evs []event) *responseObj {
	t.Helper()
	e := last(evs)
	if e.Type != "response.completed" || e.Response == nil {
		t.Fatalf("terminal event %s (%s), want response.completed", e.Type, e.raw)
	}
	return e.Response
}

func wantError(t *testing.T, e event, status int, code string) {
	t.Helper()
	if e.Type != "error" || e.Error == nil {
		t.Fatalf("got %s (%s), want an error event", e.Type, e.raw)
	}
	if e.Status != status || e.Error.Code != code {
		t.Fatalf("error status %d code %q, want %d %q (%s)", e.Status, e.Error.Code, status, code, e.raw)
	}
}

func waitRecs(t *testing.T, srv *Server, n int) []Received {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
	defer cancel()
	recs, err := srv.WaitReceived(ctx, n)
	if err != nil {
		t.Fatalf("WaitReceived(%d): %v (have %d)", n, err, len(recs))
	}
	return recs
}

// sseEvent is one parsed SSE event.
type sseEvent struct {
	name string
	data []byte
}

func postResponses(t *testing.T, base string, body any, header http.Header) *http.Response {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, base+"/responses", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	resp, err := (&http.Client{Transport: tr, Timeout: ioTimeout}).Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// readSSE parses the stream until EOF; err is the read error that ended it, nil at clean EOF.
func readSSE(resp *http.Response) ([]sseEvent, error) {
	var evs []sseEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cur sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = []byte(strings.TrimPrefix(line, "data: "))
		case line == "":
			evs = append(evs, cur)
			cur = sseEvent{}
		}
	}
	return evs, sc.Err()
}
