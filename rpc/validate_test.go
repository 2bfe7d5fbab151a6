package rpc

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// malformedCase is one bad frame body, the error it must get, and a substring
// of the error message.
type malformedCase struct {
	name string
	body string
	code jsonrpc2.Code
	id   string
	msg  string
}

var malformedBodies = []malformedCase{
	{"not json", `this is not json`, jsonrpc2.ParseError, "null", "parse error"},
	{"truncated object", `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":`, jsonrpc2.ParseError, "null", "parse error"},
	{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"echo"} x`, jsonrpc2.ParseError, "null", "parse error"},
	{"batch", `[{"jsonrpc":"2.0","id":1,"method":"echo"}]`, jsonrpc2.InvalidRequest, "null", "batch"},
	{"empty batch", `[]`, jsonrpc2.InvalidRequest, "null", "batch"},
	{"scalar", `42`, jsonrpc2.InvalidRequest, "null", "JSON object"},
	{"missing jsonrpc", `{"id":7,"method":"echo"}`, jsonrpc2.InvalidRequest, "7", `"jsonrpc"`},
	{"wrong jsonrpc", `{"jsonrpc":"1.0","id":"x","method":"echo"}`, jsonrpc2.InvalidRequest, `"x"`, `"2.0"`},
	{"numeric jsonrpc", `{"jsonrpc":2.0,"id":3,"method":"echo"}`, jsonrpc2.InvalidRequest, "3", `"2.0"`},
	{"method not a string", `{"jsonrpc":"2.0","id":8,"method":5}`, jsonrpc2.InvalidRequest, "8", "method must be a string"},
	{"id is an object", `{"jsonrpc":"2.0","id":{"a":1},"method":"echo"}`, jsonrpc2.InvalidRequest, "null", "id must be"},
	{"id is fractional", `{"jsonrpc":"2.0","id":1.5,"method":"echo"}`, jsonrpc2.InvalidRequest, "null", "id must be"},
	{"params scalar", `{"jsonrpc":"2.0","id":9,"method":"echo","params":3}`, jsonrpc2.InvalidRequest, "9", "params must be"},
	{"neither request nor response", `{"jsonrpc":"2.0","id":4}`, jsonrpc2.InvalidRequest, "null", "not a request"},
	{"response with result and error", `{"jsonrpc":"2.0","id":5,"result":1,"error":{"code":1,"message":"x"}}`, jsonrpc2.InvalidRequest, "null", "both"},
	{"request with result", `{"jsonrpc":"2.0","id":6,"method":"echo","result":1}`, jsonrpc2.InvalidRequest, "6", "cannot carry"},
}

func TestMalformedNDJSONAnsweredAndConnectionServes(t *testing.T) {
	cases := append([]malformedCase{
		{"empty line", ``, jsonrpc2.InvalidRequest, "null", "empty"},
		{"whitespace line", " \t \r", jsonrpc2.InvalidRequest, "null", "empty"},
	}, malformedBodies...)
	client, server := net.Pipe()
	serve(t, server, newTestMux(t).Mux, 0)
	p := newRawPeer(t, client, FramingNDJSON)
	p.expectEcho(1) // decide the framing first
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p.t = t
			p.raw(tc.body + "\n")
			r := p.expectError(tc.code, tc.id)
			if !strings.Contains(r.Error.Message, tc.msg) {
				t.Errorf("message %q does not mention %q", r.Error.Message, tc.msg)
			}
			p.expectEcho(100 + i)
		})
	}
}

func TestMalformedHeaderBodiesAnsweredAndConnectionServes(t *testing.T) {
	client, server := net.Pipe()
	serve(t, server, newTestMux(t).Mux, 0)
	p := newRawPeer(t, client, FramingHeader)
	p.expectEcho(1)
	for i, tc := range malformedBodies {
		t.Run(tc.name, func(t *testing.T) {
			p.t = t
			p.frame(tc.body)
			r := p.expectError(tc.code, tc.id)
			if !strings.Contains(r.Error.Message, tc.msg) {
				t.Errorf("message %q does not mention %q", r.Error.Message, tc.msg)
			}
			p.expectEcho(100 + i)
		})
	}
}

func TestMalformedHeadersResynchronise(t *testing.T) {
	valid := `{"jsonrpc":"2.0","id":77,"method":"echo","params":{"n":77}}`
	cases := []struct {
		name  string
		raw   string
		msg   string
		glued bool // the next request follows in the same write, no newline between
	}{
		{"non-numeric length", "Content-Length: abc\r\n\r\n{}", "invalid Content-Length", false},
		{"negative length", "Content-Length: -4\r\n\r\n{}", "invalid Content-Length", false},
		{"zero length", "Content-Length: 0\r\n\r\n", "invalid Content-Length", false},
		{"line without colon", "Content-Length 12\r\n\r\n", "malformed header line", false},
		{"missing length", "Content-Type: application/json\r\n\r\n{\"a\":1}", "missing Content-Length", false},
		{"ndjson on a header connection", valid + "\n", "malformed header line", false},
		{"garbage glued to next header", "Bogus:\r\nnot a header at all", "malformed header line", true},
		{"header line too long", "X-Long: " + strings.Repeat("a", readBufferSize+10) + "\r\n\r\n", "too long", false},
		{"body glued to next header", "Content-Type: x\r\n\r\n{\"jsonrpc\":\"2.0\"}", "missing Content-Length", true},
	}
	client, server := net.Pipe()
	serve(t, server, newTestMux(t).Mux, 0)
	p := newRawPeer(t, client, FramingHeader)
	p.expectEcho(1)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p.t = t
			id := 200 + i
			if !tc.glued {
				p.raw(tc.raw)
			} else {
				echo := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"echo","params":{"n":%d}}`, id, id)
				p.raw(tc.raw + "Content-Length: " + itoa(len(echo)) + "\r\n\r\n" + echo)
			}
			r := p.expectError(jsonrpc2.ParseError, "null")
			if !strings.Contains(r.Error.Message, tc.msg) {
				t.Errorf("message %q does not mention %q", r.Error.Message, tc.msg)
			}
			if tc.glued {
				if r := p.recv(); r.Error != nil || string(r.ID) != itoa(id) {
					t.Fatalf("glued request: %+v", r)
				}
			}
			p.expectEcho(300 + i)
		})
	}
}

func TestHeaderCaseInsensitiveAndExtraHeaders(t *testing.T) {
	client, server := net.Pipe()
	serve(t, server, newTestMux(t).Mux, 0)
	p := newRawPeer(t, client, FramingHeader)
	body := `{"jsonrpc":"2.0","id":5,"method":"echo","params":{"n":5}}`
	p.raw("content-length: " + itoa(len(body)) + "\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + body)
	r := p.recv()
	if r.Error != nil || string(r.Result) != `{"n":5}` {
		t.Fatalf("got %+v", r)
	}
	p.expectEcho(6)
}

func TestDecodeFrameAcceptsValidMessages(t *testing.T) {
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"m"}`,
		`{"jsonrpc":"2.0","id":"abc","method":"m","params":[1,2]}`,
		`{"jsonrpc":"2.0","method":"m","params":{}}`,
		`{"jsonrpc":"2.0","id":null,"method":"m","params":null}`,
		`{"jsonrpc":"2.0","id":1,"result":null}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`,
		"  \t{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}\r",
	} {
		if _, rej := decodeFrame([]byte(body)); rej != nil {
			t.Errorf("%s: rejected: %d %s", body, rej.code, rej.message)
		}
	}
}
