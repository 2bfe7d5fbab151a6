package daemon

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hearthd/hearth/session/sim"
)

// rawConn speaks bytes to the daemon, to send what no well-behaved client
// would.
type rawConn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func (td *testDaemon) raw() *rawConn {
	c, err := net.Dial("unix", td.cfg.Socket)
	if err != nil {
		td.t.Fatal(err)
	}
	td.t.Cleanup(func() { c.Close() })
	return &rawConn{t: td.t, c: c, r: bufio.NewReaderSize(c, 1<<20)}
}

func (rc *rawConn) send(s string) {
	rc.t.Helper()
	if _, err := rc.c.Write([]byte(s)); err != nil {
		rc.t.Fatal(err)
	}
}

type wireReply struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// reply reads the next response, skipping notifications.
func (rc *rawConn) reply() wireReply {
	rc.t.Helper()
	rc.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	for {
		line, err := rc.r.ReadBytes('\n')
		if err != nil {
			rc.t.Fatalf("reading a reply: %v", err)
		}
		var r wireReply
		if err := json.Unmarshal(line, &r); err != nil {
			rc.t.Fatalf("daemon sent non-JSON: %q", line)
		}
		if r.Method == "" {
			return r
		}
	}
}

// next reads the next message, notification or response.
func (rc *rawConn) next() wireReply {
	rc.t.Helper()
	rc.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	line, err := rc.r.ReadBytes('\n')
	if err != nil {
		rc.t.Fatalf("reading a message: %v", err)
	}
	var r wireReply
	if err := json.Unmarshal(line, &r); err != nil {
		rc.t.Fatalf("daemon sent non-JSON: %q", line)
	}
	return r
}

func (rc *rawConn) expectError(what string, code int, mention string) {
	rc.t.Helper()
	r := rc.reply()
	if r.Error == nil || r.Error.Code != code {
		rc.t.Fatalf("%s: got %+v, want error %d", what, r, code)
	}
	if mention != "" && !strings.Contains(r.Error.Message, mention) {
		rc.t.Errorf("%s: message %q does not mention %q", what, r.Error.Message, mention)
	}
}

// Every malformed frame gets a JSON-RPC error and the connection keeps
// serving; nothing a client sends crashes the daemon.
func TestBadInputIsAnsweredAndConnectionSurvives(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	rc := td.raw()

	rc.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}` + "\n")
	rc.expectError("request before initialize", -32600, "initialize")

	rc.send("this is not json\n")
	rc.expectError("not JSON", -32700, "")
	rc.send("\n")
	rc.expectError("empty line", -32600, "")
	rc.send(`{"jsonrpc":"2.0","id":2,"method":` + "\n")
	rc.expectError("truncated JSON", -32700, "")
	rc.send(`{"jsonrpc":"2.0","id":3}` + "\n")
	rc.expectError("not a request", -32600, "")
	rc.send(`[1,2,3]` + "\n")
	rc.expectError("batch", -32600, "")
	rc.send(`"just a string"` + "\n")
	rc.expectError("JSON that is not an object", -32600, "")
	big := `{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"x":"` + strings.Repeat("a", maxEditorMessage) + `"}}` + "\n"
	rc.send(big)
	rc.expectError("oversized message", -32600, "large")

	rc.send(`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":1}}` + "\n")
	if r := rc.reply(); r.Error != nil {
		t.Fatalf("initialize after bad input: %+v", r.Error)
	}
	rc.send(`{"jsonrpc":"2.0","id":6,"method":"no/such/method","params":{}}` + "\n")
	rc.expectError("unknown method", -32601, "")
	rc.send(`{"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":5,"mcpServers":[]}}` + "\n")
	rc.expectError("cwd of the wrong type", -32602, "cwd")
	rc.send(`{"jsonrpc":"2.0","id":8,"method":"session/new","params":{"cwd":"relative/dir","mcpServers":[]}}` + "\n")
	rc.expectError("relative cwd", -32602, "cwd")
	rc.send(`{"jsonrpc":"2.0","id":9,"method":"session/new","params":{"cwd":"/no/such/dir/anywhere","mcpServers":[]}}` + "\n")
	rc.expectError("missing cwd", -32602, "cwd")
	rc.send(`{"jsonrpc":"2.0","id":10,"method":"session/new"}` + "\n")
	rc.expectError("no params", -32602, "")
	rc.send(`{"jsonrpc":"2.0","id":11,"method":"session/prompt","params":{"sessionId":"ses_nope","prompt":[{"type":"text","text":"hi"}]}}` + "\n")
	rc.expectError("unknown session", -32002, "ses_nope")
	rc.send(`{"jsonrpc":"2.0","id":12,"method":"session/prompt","params":{"sessionId":"x","prompt":"hi"}}` + "\n")
	rc.expectError("prompt of the wrong type", -32602, "prompt")
	// A bad notification is not answered and does not end the connection.
	rc.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":42}}` + "\n")

	// Still serving, and another client was never affected.
	rc.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":13,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`+"\n", td.root))
	if r := rc.reply(); r.Error != nil || !strings.Contains(string(r.Result), "ses_") {
		t.Fatalf("session/new after bad input: %+v %s", r.Error, r.Result)
	}
	ed := td.connect()
	ed.initialize()
	ed.prompt(ed.newSession(td.root), "hi")
}

// The socket also speaks LSP Content-Length framing, detected from the
// first byte.
func TestContentLengthFraming(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	rc := td.raw()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`
	rc.send(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
	rc.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	hdr, err := rc.r.ReadString('\n')
	if err != nil || !strings.HasPrefix(hdr, "Content-Length: ") {
		t.Fatalf("reply header %q: %v", hdr, err)
	}
	var n int
	fmt.Sscanf(hdr, "Content-Length: %d", &n)
	rc.r.ReadString('\n') // blank line
	buf := make([]byte, n)
	if _, err := io.ReadFull(rc.r, buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(buf), `"protocolVersion":1`) {
		t.Fatalf("reply %s", buf)
	}
}

// A session/cancel that follows a session/prompt on the wire cancels that
// prompt, however quickly it follows.
func TestCancelRightAfterPrompt(t *testing.T) {
	td := startDaemon(t, sim.Options{Cost: sim.Cost{TokensPerSecond: 1000}}, "")
	rc := td.raw()
	rc.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n")
	rc.reply()
	rc.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`+"\n", td.root))
	var s struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(rc.reply().Result, &s)
	rc.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"talk sim:tokens=100000"}]}}`+"\n"+
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`+"\n", s.SessionID, s.SessionID))
	r := rc.reply()
	if r.Error != nil || !strings.Contains(string(r.Result), `"cancelled"`) {
		t.Fatalf("prompt answered %s %+v, want stopReason cancelled", r.Result, r.Error)
	}
}
