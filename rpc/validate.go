package rpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf16"
	"unicode/utf8"

	"go.lsp.dev/jsonrpc2"
)

// decodeFrame validates one frame body and decodes it with
// jsonrpc2.DecodeMessage. A frame that is not a single well-formed JSON-RPC 2.0
// request, notification or response is returned as a rejection instead:
//
//   - empty or whitespace only: -32600, id null;
//   - not JSON (truncated, garbage): -32700, id null;
//   - JSON but not a JSON-RPC message (batch array, scalar, wrong or missing
//     "jsonrpc", non-string method, id of the wrong type, params neither
//     object nor array): -32600, with the request's id when it is recoverable;
//   - a request whose string id is not valid Unicode (raw bytes that are not
//     UTF-8, or an escaped lone surrogate): -32600, id null. The spec says
//     the server "MUST reply with the same value", and such a value has no
//     JSON (UTF-8, RFC 8259 §8.1) representation to reply with; echoing a
//     repaired id would answer a request the client never sent. The spec's
//     rule for an id that cannot be detected applies instead: "If there was
//     an error in detecting the id in the Request object (e.g. Parse
//     error/Invalid Request), it MUST be Null."
//
// A request with "id": null is a request, not a notification: the spec
// (section 4) says the id "MUST contain a String, Number, or NULL value if
// included. If it is not included it is assumed to be a notification", and
// the server must reply with the same value. jsonrpc2 treats an explicit null
// like an absent id, so decodeFrame turns such a request into a call with a
// stand-in id (nullStandIn) that Write maps back to null in the reply.
//
// The returned message borrows body, as DecodeMessage's results do.
func decodeFrame(body []byte) (jsonrpc2.Message, *rejection) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, &rejection{code: jsonrpc2.InvalidRequest, message: "invalid request: empty message"}
	}
	if !json.Valid(body) {
		return nil, &rejection{code: jsonrpc2.ParseError, message: "parse error: " + syntaxProblem(body)}
	}
	switch body[0] {
	case '{':
	case '[':
		return nil, &rejection{code: jsonrpc2.InvalidRequest, message: "invalid request: batch requests are not supported"}
	default:
		return nil, &rejection{code: jsonrpc2.InvalidRequest, message: "invalid request: a message must be a JSON object"}
	}

	msg, err := jsonrpc2.DecodeMessage(body)
	if err != nil {
		return nil, explainInvalid(body)
	}
	switch m := msg.(type) {
	case *jsonrpc2.Call:
		if id, ok := m.ID().StringValue(); ok && !validStringID(id, body) {
			return nil, &rejection{code: jsonrpc2.InvalidRequest, message: "invalid request: id must be a valid Unicode string"}
		}
		if p := m.Params(); len(p) > 0 && p[0] != '{' && p[0] != '[' {
			return nil, &rejection{id: m.ID(), code: jsonrpc2.InvalidRequest, message: "invalid request: params must be an object or an array"}
		}
	case *jsonrpc2.Notification:
		if p := m.Params(); len(p) > 0 && p[0] != '{' && p[0] != '[' {
			return nil, &rejection{code: jsonrpc2.InvalidRequest, message: "invalid request: params must be an object or an array"}
		}
		if hasNullID(body) {
			return jsonrpc2.NewCall(newNullStandIn(), m.Method(), m.Params()), nil
		}
	}
	return msg, nil
}

// nullStandInPrefix starts every stand-in id for a request whose id was
// null. It is not valid UTF-8, and decodeFrame refuses every string id that
// is not, so a stand-in can never equal an id a peer sent; wireStream.Write
// turns it back into null (restoreNullID).
const nullStandInPrefix = "\xffnull-id#"

// nullStandIns numbers stand-in ids for the process's life, so that two
// null-id requests in flight at once on one connection stay distinct.
var nullStandIns atomic.Uint64

// newNullStandIn returns a fresh stand-in id for a null-id request.
func newNullStandIn() jsonrpc2.ID {
	return jsonrpc2.NewStringID(nullStandInPrefix + strconv.FormatUint(nullStandIns.Add(1), 10))
}

// hasNullID reports whether the request object body (valid JSON, already
// decoded as a notification) has an "id" member, which can then only be
// null. It runs for notifications only; most have no "id" anywhere in them,
// and those are told apart without decoding.
func hasNullID(body []byte) bool {
	if !bytes.Contains(body, []byte(`"id"`)) && !bytes.Contains(body, []byte(`\u`)) {
		return false
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return false
	}
	raw, ok := fields["id"]
	return ok && string(raw) == "null"
}

// validStringID reports whether id, decoded from the request body, is the
// value the peer sent: valid UTF-8 with no escaped lone surrogate (which
// decoders replace with U+FFFD). The common case, an id without U+FFFD, costs
// one scan of the id.
func validStringID(id string, body []byte) bool {
	if !utf8.ValidString(id) {
		return false
	}
	if !strings.ContainsRune(id, utf8.RuneError) {
		return true
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return false
	}
	return validRawString(fields["id"])
}

// validRawString reports whether raw, a JSON string literal, is valid UTF-8
// and free of escaped lone surrogates: whether it decodes to exactly the
// Unicode text it spells.
func validRawString(raw []byte) bool {
	if !utf8.Valid(raw) {
		return false
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++ // the escaped character
		if i >= len(raw) || raw[i] != 'u' {
			continue
		}
		r, ok := hex4(raw[i+1:])
		if !ok {
			return false
		}
		i += 4
		switch {
		case utf16.IsSurrogate(r) && r >= 0xDC00:
			return false // a low surrogate with no high one before it
		case utf16.IsSurrogate(r):
			// A high surrogate must be followed by an escaped low one.
			if i+6 >= len(raw) || raw[i+1] != '\\' || raw[i+2] != 'u' {
				return false
			}
			lo, ok := hex4(raw[i+3:])
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return false
			}
			i += 6
		}
	}
	return true
}

// hex4 decodes the four hex digits at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[:4]), 16, 32)
	return rune(n), err == nil
}

// syntaxProblem describes why body is not JSON. It runs only on the error path.
func syntaxProblem(body []byte) string {
	var v json.RawMessage
	if err := json.Unmarshal(body, &v); err != nil {
		return err.Error()
	}
	return "invalid JSON"
}

// explainInvalid builds the rejection for a JSON object that DecodeMessage
// refused, naming the first problem it finds. The id is echoed only for
// request-shaped objects (with a "method"): echoing the id of a malformed
// response could be mistaken by the peer for the answer to its own call.
func explainInvalid(body []byte) *rejection {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return &rejection{code: jsonrpc2.InvalidRequest, message: "invalid request: " + err.Error()}
	}
	rej := &rejection{code: jsonrpc2.InvalidRequest}
	method, isRequest := fields["method"]
	rawID, hasID := fields["id"]
	id, idOK := recoverID(rawID)
	if isRequest && hasID && idOK {
		rej.id = id
	}

	version, hasVersion := fields["jsonrpc"]
	_, hasResult := fields["result"]
	_, hasError := fields["error"]
	var reason string
	switch {
	case !hasVersion:
		reason = `missing "jsonrpc":"2.0"`
	case string(version) != `"2.0"`:
		reason = fmt.Sprintf(`"jsonrpc" must be "2.0", got %.32s`, version)
	case isRequest && (len(method) == 0 || method[0] != '"'):
		reason = fmt.Sprintf("method must be a string, got %.32s", method)
	case isRequest && (hasResult || hasError):
		reason = `a request cannot carry "result" or "error"`
	case hasID && !idOK && len(rawID) > 0 && rawID[0] == '"':
		reason = "id must be a valid Unicode string"
	case hasID && !idOK:
		reason = fmt.Sprintf("id must be a string, an integer or null, got %.32s", rawID)
	case !isRequest && !hasResult && !hasError:
		reason = `not a request (no "method") nor a response (no "result" or "error")`
	case hasResult && hasError:
		reason = `a response cannot carry both "result" and "error"`
	case hasError:
		reason = "malformed error object"
	default:
		reason = "not a valid JSON-RPC 2.0 message"
	}
	rej.message = "invalid request: " + reason
	return rej
}

// recoverID decodes a raw id if it has a type JSON-RPC allows (string,
// integer, null).
func recoverID(raw json.RawMessage) (jsonrpc2.ID, bool) {
	if len(raw) == 0 {
		return jsonrpc2.ID{}, false
	}
	switch raw[0] {
	case 'n':
		return jsonrpc2.ID{}, string(raw) == "null"
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil || !validRawString(raw) {
			// Not the value the peer sent: answer with null, never with
			// a repaired id.
			return jsonrpc2.ID{}, false
		}
		return jsonrpc2.NewStringID(s), true
	default:
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return jsonrpc2.ID{}, false
		}
		return jsonrpc2.NewNumberID(n), true
	}
}
