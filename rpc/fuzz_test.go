package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"go.lsp.dev/jsonrpc2"
)

// Seed corpora: testdata/fuzz/FuzzServerStream and testdata/fuzz/FuzzDecodeFrame.
// Run with: go test ./rpc -run '^$' -fuzz FuzzServerStream (or FuzzDecodeFrame).

// fuzzMaxMessage is small so that the fuzzer reaches the oversize paths.
const fuzzMaxMessage = 256

// fuzzConn is a connection whose peer sent in and then hung up; what the
// stream writes collects in out.
type fuzzConn struct {
	in  *bytes.Reader
	out bytes.Buffer
}

func (c *fuzzConn) Read(p []byte) (int, error)  { return c.in.Read(p) }
func (c *fuzzConn) Write(p []byte) (int, error) { return c.out.Write(p) }
func (c *fuzzConn) Close() error                { return nil }

// fuzzReply is one frame the server wrote, checked and decoded: its id, and
// its error (nil for a result).
type fuzzReply struct {
	ID    json.RawMessage
	Error *struct {
		Code    *int    `json:"code"`
		Message *string `json:"message"`
	}
}

// FuzzServerStream feeds arbitrary bytes to a server stream as everything a
// peer sends: framing detection, then either framing's reader, validation and
// the answers to bad frames. It checks that nothing panics or loops, that
// every frame the server writes is one well-formed JSON-RPC response in the
// detected framing, and that every frame read is either classified (a call,
// notification or response returned by Read) or answered with exactly one
// -32700/-32600 error: on NDJSON, where frames are lines, it counts them.
// Each call returned is answered, and the answer must carry the call's id
// (null for a request whose id was null).
func FuzzServerStream(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\n"))
	f.Add([]byte("cat\n" + `{"jsonrpc":"2.0","id":1,"method":"initialize"}` + "\n"))
	f.Add([]byte("Content-Length: 40\r\n\r\n" + `{"jsonrpc":"2.0","id":1,"method":"echo"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		conn := &fuzzConn{in: bytes.NewReader(data)}
		stream, framing, err := NewServerStream(conn, fuzzMaxMessage)
		if err != nil {
			if !isBlank(data) {
				t.Fatalf("detection failed on non-blank input: %v", err)
			}
			return
		}
		ctx := context.Background()
		var (
			messages int
			wantIDs  []string // encoded ids of the answers to calls, in order
		)
		for reads := 0; ; reads++ {
			if reads > len(data)+1 {
				t.Fatalf("%d reads from %d bytes: the stream does not advance", reads, len(data))
			}
			msg, _, err := stream.Read(ctx)
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, errResyncFailed) {
					t.Fatalf("Read ended with %v", err)
				}
				break
			}
			messages++
			switch m := msg.(type) {
			case *jsonrpc2.Call:
				id := m.ID()
				want := idKey(id)
				if s, ok := id.StringValue(); ok && strings.HasPrefix(s, nullStandInPrefix) {
					want = "null"
				} else if ok && !utf8.ValidString(s) {
					t.Fatalf("call with a non-UTF-8 id %q was not refused", s)
				}
				wantIDs = append(wantIDs, want)
				if _, err := stream.Write(ctx, jsonrpc2.NewResponse(id, nil, nil)); err != nil {
					t.Fatalf("answer call: %v", err)
				}
			case *jsonrpc2.Notification, *jsonrpc2.Response:
			default:
				t.Fatalf("Read returned an unclassified %T", msg)
			}
		}

		replies := splitReplies(t, framing, conn.out.Bytes())
		var answered []string
		rejections := 0
		for _, raw := range replies {
			r := checkReply(t, raw)
			if r.Error == nil {
				answered = append(answered, rawIDKey(t, r.ID))
				continue
			}
			rejections++
			if c := *r.Error.Code; c != int(jsonrpc2.ParseError) && c != int(jsonrpc2.InvalidRequest) {
				t.Fatalf("rejection with code %d: %s", c, raw)
			}
		}
		if strings.Join(answered, ",") != strings.Join(wantIDs, ",") {
			t.Fatalf("answers to calls carry ids %v, want %v", answered, wantIDs)
		}
		if framing == FramingNDJSON {
			if frames := ndjsonFrames(data); messages+rejections != frames {
				t.Fatalf("%d lines, but %d messages read and %d rejected", frames, messages, rejections)
			}
		}
	})
}

// idKey names an id's type and value: "n:7", "s:abc", "null".
func idKey(id jsonrpc2.ID) string {
	if n, ok := id.Number(); ok {
		return "n:" + strconv.FormatInt(n, 10)
	}
	if s, ok := id.StringValue(); ok {
		return "s:" + s
	}
	return "null"
}

// rawIDKey is idKey for an id as written on the wire.
func rawIDKey(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("id %s: %v", raw, err)
	}
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return "s:" + v
	case json.Number:
		return "n:" + v.String()
	}
	t.Fatalf("id %s is not a string, number or null", raw)
	return ""
}

// ndjsonFrames counts the frames an NDJSON reader sees in data: every line,
// and a last line without a newline unless it is blank.
func ndjsonFrames(data []byte) int {
	n := bytes.Count(data, []byte("\n"))
	if tail := data[bytes.LastIndexByte(data, '\n')+1:]; !isBlank(tail) {
		n++
	}
	return n
}

// splitReplies splits what the server wrote into frame bodies, checking the
// framing itself.
func splitReplies(t *testing.T, framing Framing, out []byte) [][]byte {
	t.Helper()
	var bodies [][]byte
	if framing == FramingNDJSON {
		if len(out) > 0 && out[len(out)-1] != '\n' {
			t.Fatalf("output does not end with a newline: %q", out)
		}
		for line := range bytes.SplitSeq(out, []byte("\n")) {
			if len(line) > 0 {
				bodies = append(bodies, line)
			}
		}
		return bodies
	}
	r := bufio.NewReader(bytes.NewReader(out))
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF && line == "" {
			return bodies
		}
		v, ok := strings.CutPrefix(line, "Content-Length: ")
		if !ok || !strings.HasSuffix(v, "\r\n") {
			t.Fatalf("bad header line %q in %q", line, out)
		}
		n, err := strconv.Atoi(strings.TrimSuffix(v, "\r\n"))
		if err != nil {
			t.Fatalf("bad Content-Length %q", line)
		}
		if blank, _ := r.ReadString('\n'); blank != "\r\n" {
			t.Fatalf("no blank line after the header in %q", out)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			t.Fatalf("short body: %v", err)
		}
		bodies = append(bodies, body)
	}
}

// checkReply checks that raw is one well-formed JSON-RPC 2.0 response.
func checkReply(t *testing.T, raw []byte) fuzzReply {
	t.Helper()
	if !utf8.Valid(raw) || !json.Valid(raw) {
		t.Fatalf("reply is not UTF-8 JSON: %q", raw)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatalf("reply %q: %v", raw, err)
	}
	_, hasResult := fields["result"]
	_, hasError := fields["error"]
	id, hasID := fields["id"]
	if string(fields["jsonrpc"]) != `"2.0"` || !hasID || hasResult == hasError || len(fields) != 3 {
		t.Fatalf("not a JSON-RPC 2.0 response: %s", raw)
	}
	r := fuzzReply{ID: id}
	if hasError {
		if err := json.Unmarshal(fields["error"], &r.Error); err != nil || r.Error == nil ||
			r.Error.Code == nil || r.Error.Message == nil || *r.Error.Code == 0 {
			t.Fatalf("malformed error object: %s", raw)
		}
	}
	rawIDKey(t, id) // a string, a number or null
	return r
}

// FuzzDecodeFrame checks the validation of one frame body: it never panics,
// a frame is either decoded into a call, notification or response, or
// rejected with -32700 (not JSON) or -32600 (JSON but not a JSON-RPC
// message), never both or neither; and the rejection hearth writes is one
// well-formed UTF-8 JSON-RPC error response.
func FuzzDecodeFrame(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":null,"method":"m"}`))
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"m\"}"))
	f.Fuzz(func(t *testing.T, body []byte) {
		msg, rej := decodeFrame(body)
		if (msg == nil) == (rej == nil) {
			t.Fatalf("decodeFrame returned message %v and rejection %v", msg, rej)
		}
		trimmed := bytes.TrimSpace(body)
		if rej == nil {
			if !json.Valid(trimmed) || trimmed[0] != '{' {
				t.Fatalf("accepted a frame that is not a JSON object: %q", body)
			}
			switch m := msg.(type) {
			case *jsonrpc2.Call:
				if s, ok := m.ID().StringValue(); ok && !strings.HasPrefix(s, nullStandInPrefix) && !utf8.ValidString(s) {
					t.Fatalf("accepted a non-UTF-8 id %q", s)
				}
			case *jsonrpc2.Notification, *jsonrpc2.Response:
			default:
				t.Fatalf("unclassified %T", msg)
			}
			return
		}
		switch {
		case rej.code != jsonrpc2.ParseError && rej.code != jsonrpc2.InvalidRequest:
			t.Fatalf("rejection code %d", rej.code)
		case len(trimmed) > 0 && !json.Valid(trimmed) && rej.code != jsonrpc2.ParseError:
			t.Fatalf("invalid JSON rejected with %d, want -32700", rej.code)
		case json.Valid(trimmed) && rej.code != jsonrpc2.InvalidRequest:
			t.Fatalf("valid JSON rejected with %d, want -32600", rej.code)
		}
		conn := &fuzzConn{in: bytes.NewReader(nil)}
		s := newWireStream(conn, nil, FramingNDJSON, DefaultMaxMessage)
		if err := s.answer(rej); err != nil {
			t.Fatal(err)
		}
		replies := splitReplies(t, FramingNDJSON, conn.out.Bytes())
		if len(replies) != 1 {
			t.Fatalf("%d frames written for one rejection", len(replies))
		}
		if r := checkReply(t, replies[0]); r.Error == nil || *r.Error.Code != int(rej.code) {
			t.Fatalf("rejection written as %s", replies[0])
		}
	})
}
