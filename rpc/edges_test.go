package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"go.lsp.dev/jsonrpc2"
)

// A first line that merely starts with 'C' or 'c' is a junk NDJSON line: it
// gets -32700 and the request after it is answered in NDJSON. Only a first
// line that starts with an LSP header name selects header framing.
func TestFramingJunkLineStartingWithCIsNDJSON(t *testing.T) {
	for _, first := range []string{"cat", "C", "Content", "content-length", "content-lengthy: 3", "CONTENT LENGTH: 3"} {
		t.Run(first, func(t *testing.T) {
			client, server := net.Pipe()
			get := serve(t, server, newTestMux(t).Mux, 0)
			p := newRawPeer(t, client, FramingNDJSON)
			p.raw(first + "\n")
			p.expectError(jsonrpc2.ParseError, "null")
			p.expectEcho(1)
			if got := get().framing; got != FramingNDJSON {
				t.Fatalf("framing = %v, want ndjson", got)
			}
		})
	}
}

// Header names are case-insensitive (LSP), and Content-Type may come first.
func TestFramingHeaderDetectedByHeaderName(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":7,"method":"echo","params":{"n":7}}`
	for name, raw := range map[string]string{
		"upper case":         "CONTENT-LENGTH: " + itoa(len(body)) + "\r\n\r\n" + body,
		"lower case":         "content-length:" + itoa(len(body)) + "\r\n\r\n" + body,
		"content-type first": "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: " + itoa(len(body)) + "\r\n\r\n" + body,
	} {
		t.Run(name, func(t *testing.T) {
			client, server := net.Pipe()
			get := serve(t, server, newTestMux(t).Mux, 0)
			p := newRawPeer(t, client, FramingHeader)
			p.raw(raw)
			if r := p.recv(); r.Error != nil || string(r.ID) != "7" || string(r.Result) != `{"n":7}` {
				t.Fatalf("got id %s result %s error %+v", r.ID, r.Result, r.Error)
			}
			if got := get().framing; got != FramingHeader {
				t.Fatalf("framing = %v, want header", got)
			}
			p.expectEcho(8)
		})
	}
}

// JSON-RPC 2.0, section 4: the id "MUST contain a String, Number, or NULL
// value if included. If it is not included it is assumed to be a
// notification." A request with "id": null is therefore a request, not a
// notification, and "the Server MUST reply with the same value": null.
func TestNullIDRequestIsAnsweredWithNullID(t *testing.T) {
	for _, framing := range []Framing{FramingNDJSON, FramingHeader} {
		t.Run(framing.String(), func(t *testing.T) {
			client, server := net.Pipe()
			serve(t, server, newTestMux(t).Mux, 0)
			p := newRawPeer(t, client, framing)
			p.expectEcho(1)

			p.frame(`{"jsonrpc":"2.0","id":null,"method":"echo","params":{"n":"null-1"}}`)
			r := p.recv()
			if r.Error != nil || string(r.ID) != "null" || string(r.Result) != `{"n":"null-1"}` {
				t.Fatalf("got id %s result %s error %+v", r.ID, r.Result, r.Error)
			}
			// Errors from the method table too.
			p.frame(`{"jsonrpc":"2.0","id":null,"method":"nope/nothing"}`)
			p.expectError(jsonrpc2.MethodNotFound, "null")
			p.frame(`{"jsonrpc":"2.0","id":null,"method":"panic"}`)
			p.expectError(jsonrpc2.InternalError, "null")
			// Two in a row, with a numbered call between: each answered once, in order.
			p.frame(`{"jsonrpc":"2.0","id":null,"method":"echo","params":{"n":"null-2"}}`)
			p.frame(`{"jsonrpc":"2.0","id":2,"method":"echo","params":{"n":2}}`)
			p.frame(`{"jsonrpc":"2.0","id":null,"method":"echo","params":{"n":"null-3"}}`)
			for _, want := range []struct{ id, result string }{{"null", `{"n":"null-2"}`}, {"2", `{"n":2}`}, {"null", `{"n":"null-3"}`}} {
				r := p.recv()
				if r.Error != nil || string(r.ID) != want.id || string(r.Result) != want.result {
					t.Fatalf("got id %s result %s error %+v, want id %s result %s", r.ID, r.Result, r.Error, want.id, want.result)
				}
			}
			p.expectEcho(3)
		})
	}
}

// A notification (no id member) still gets no answer, and a null-id request
// to a notification method is answered.
func TestNullIDNotificationDistinction(t *testing.T) {
	client, server := net.Pipe()
	m := newTestMux(t)
	serve(t, server, m.Mux, 0)
	p := newRawPeer(t, client, FramingNDJSON)
	p.frame(`{"jsonrpc":"2.0","method":"note/record"}`)
	p.frame(`{"jsonrpc":"2.0","id":null,"method":"note/record"}`)
	for range 2 {
		select {
		case <-m.notes:
		case <-time.After(testTimeout):
			t.Fatal("notification handler did not run")
		}
	}
	r := p.recv() // the first reply is the null-id request's: the notification got none
	if r.Error != nil || string(r.ID) != "null" || string(r.Result) != "null" {
		t.Fatalf("got id %s result %s error %+v", r.ID, r.Result, r.Error)
	}
	p.expectEcho(1)
}

// recvLine reads one raw NDJSON reply line.
func (p *rawPeer) recvLine() []byte {
	p.t.Helper()
	_ = p.conn.SetReadDeadline(time.Now().Add(testTimeout))
	line, err := p.in.ReadBytes('\n')
	if err != nil {
		p.t.Fatalf("read reply: %v", err)
	}
	return line
}

// A string id must come back as the same value. One that is not valid UTF-8
// (raw bytes, or an escaped lone surrogate) has no JSON representation to
// echo: the id cannot be detected, so per the spec the request is refused
// with -32600 and id null, never answered with an altered id.
func TestIDWithInvalidUTF8Refused(t *testing.T) {
	client, server := net.Pipe()
	serve(t, server, newTestMux(t).Mux, 0)
	p := newRawPeer(t, client, FramingNDJSON)
	p.expectEcho(1)
	for i, body := range []string{
		"{\"jsonrpc\":\"2.0\",\"id\":\"a\xffb\",\"method\":\"echo\",\"params\":{}}",
		"{\"jsonrpc\":\"2.0\",\"id\":\"a\xff\\nb\",\"method\":\"echo\",\"params\":{}}",
		`{"jsonrpc":"2.0","id":"\ud800","method":"echo","params":{}}`,
		`{"jsonrpc":"2.0","id":"x\udc00y","method":"echo","params":{}}`,
		`{"jsonrpc":"2.0","id":"\ud800\u0041","method":"echo","params":{}}`,
		// Malformed as well: the rejection must not echo a repaired id.
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":5}",
		`{"jsonrpc":"1.0","id":"\udfff","method":"echo"}`,
	} {
		p.raw(body + "\n")
		line := p.recvLine()
		if !utf8.Valid(line) {
			t.Errorf("%q: reply is not UTF-8: %q", body, line)
		}
		var r wireReply
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%q: reply %q: %v", body, line, err)
		}
		if r.Error == nil || r.Error.Code != int(jsonrpc2.InvalidRequest) || string(r.ID) != "null" {
			t.Errorf("%q: got %s, want -32600 with id null", body, line)
		}
		p.expectEcho(100 + i)
	}
	// Valid ids, escaped or not, come back as the same value.
	for i, id := range []string{`"\ud83d\ude00"`, `"😀"`, `"a\\b\"c\u0001"`, `"\u00e9"`, `""`} {
		p.raw(`{"jsonrpc":"2.0","id":` + id + `,"method":"echo","params":{}}` + "\n")
		r := p.recv()
		var want, got string
		_ = json.Unmarshal([]byte(id), &want)
		if err := json.Unmarshal(r.ID, &got); err != nil || got != want || r.Error != nil {
			t.Errorf("id %s: got id %s (%q), error %+v", id, r.ID, got, r.Error)
		}
		p.expectEcho(200 + i)
	}
}

// Whatever a peer sends, what hearth writes is valid UTF-8 JSON: a rejection
// that quotes the peer's bytes repairs them.
func TestRepliesAreValidUTF8(t *testing.T) {
	client, server := net.Pipe()
	serve(t, server, newTestMux(t).Mux, 0)
	p := newRawPeer(t, client, FramingNDJSON)
	for i, body := range []string{
		"{\"jsonrpc\":\"\xff\xfe\",\"id\":1,\"method\":\"echo\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"no\xffpe\"}",
		"\xff\xfe not json",
	} {
		p.raw(body + "\n")
		if line := p.recvLine(); !utf8.Valid(line) || !json.Valid(line) {
			t.Errorf("%q: reply %q is not valid UTF-8 JSON", body, line)
		}
		p.expectEcho(100 + i)
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A staged call's second stage runs after the read loop has moved on and
// reused the frame's buffer. When it fails, the log must still name its own
// method, not whatever bytes the next frames left where the name was.
func TestStagedCallErrorLogNamesItsMethod(t *testing.T) {
	var logs syncBuffer
	m := NewMux(slog.New(slog.NewJSONHandler(&logs, nil)))
	m.Handle("echo", func(ctx context.Context, params json.RawMessage) (any, error) {
		return json.RawMessage(append([]byte(nil), params...)), nil
	})
	methods := []string{"session/prompt", "stage/alpha", "stage/bravo-longer-name", "s/c"}
	release := make(map[string]chan struct{})
	for _, method := range methods {
		ch := make(chan struct{})
		release[method] = ch
		m.HandleStaged(method, func(ctx context.Context, params json.RawMessage) (func(context.Context) (any, error), error) {
			return func(ctx context.Context) (any, error) {
				<-ch
				return nil, errors.New("boom") // an internal error: logged
			}, nil
		})
	}
	client, server := net.Pipe()
	serve(t, server, m, 0)
	p := newRawPeer(t, client, FramingNDJSON)
	for i, method := range methods {
		p.frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{}}`, i+1, method))
		// Frames read after the staged call was released overwrite its buffer.
		p.expectEcho(100 + i)
		p.frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"echo","params":{"pad":"%s"}}`, 200+i, "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"))
		if r := p.recv(); string(r.ID) != itoa(200+i) {
			t.Fatalf("got id %s, want %d", r.ID, 200+i)
		}
		close(release[method])
		p.expectError(jsonrpc2.InternalError, itoa(i+1))
	}
	var got []string
	for line := range bytes.SplitSeq([]byte(logs.String()), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var rec struct {
			Msg    string `json:"msg"`
			Method string `json:"method"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec.Msg == "rpc: call failed" {
			got = append(got, rec.Method)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(methods) {
		t.Fatalf("logged methods %q, want %q", got, methods)
	}
}
