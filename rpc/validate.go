package rpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

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
//     object nor array): -32600, with the request's id when it is recoverable.
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
		if p := m.Params(); len(p) > 0 && p[0] != '{' && p[0] != '[' {
			return nil, &rejection{id: m.ID(), code: jsonrpc2.InvalidRequest, message: "invalid request: params must be an object or an array"}
		}
	case *jsonrpc2.Notification:
		if p := m.Params(); len(p) > 0 && p[0] != '{' && p[0] != '[' {
			return nil, &rejection{code: jsonrpc2.InvalidRequest, message: "invalid request: params must be an object or an array"}
		}
	}
	return msg, nil
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
		if err := json.Unmarshal(raw, &s); err != nil {
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
