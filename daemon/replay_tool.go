package daemon

import (
	"encoding/json"
	"math"

	"github.com/coder/acp-go-sdk"
)

// The replay's tool calls and their results, written in one pass in the
// SDK's encoding (which decodes every level into maps and encodes it again:
// keys in order, strings as encoding/json writes them). A tool call is a
// third of a long session's items and its result with a view another
// third; the SDK's round trips were most of a replay's time.

// maxShownOutput is how much of a tool's output an editor is shown (clip).
const maxShownOutput = 8 << 10

// toolCallNotification is the tool_call that shows a stored function call:
// acp.StartToolCall(callID, name, WithStartKind(kind),
// WithStartStatus(pending), WithStartRawInput(rawArgs(args))) as the SDK
// encodes it, named (namedToolCall).
func toolCallNotification(sessionID, callID, name string, kind acp.ToolKind, args string) json.RawMessage {
	b := make([]byte, 0, len(args)+len(sessionID)+len(callID)+len(name)+128)
	b = append(b, `{"sessionId":`...)
	b = appendString(b, sessionID)
	b = append(b, `,"update":{`...)
	if kind != "" {
		b = append(b, `"kind":`...)
		b = appendString(b, string(kind))
		b = append(b, ',')
	}
	if name != "" {
		b = append(b, `"name":`...)
		b = appendString(b, name)
		b = append(b, ',')
	}
	if in := rawInput(args); in != nil {
		b = append(b, `"rawInput":`...)
		b = append(b, in...)
		b = append(b, ',')
	}
	b = append(b, `"sessionUpdate":"tool_call","status":"pending","title":`...)
	b = appendString(b, name)
	b = append(b, `,"toolCallId":`...)
	b = appendString(b, callID)
	return append(b, "}}"...)
}

// rawInput is a call's arguments as the SDK sends its rawInput: decoded (the
// string itself when it is not JSON) and encoded again; nil when that is
// nothing (null).
func rawInput(args string) []byte {
	if b, ok := appendJSON(nil, []byte(args)); ok {
		if string(b) == "null" {
			return nil // decoded, nothing: no rawInput
		}
		return b
	}
	switch v := rawArgs(args).(type) {
	case nil:
		return nil
	case string: // not JSON, and perhaps not UTF-8
		return appendString(nil, v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil
		}
		return b
	}
}

// storedView is a stored session.ToolView with its strings as stored.
type storedView struct {
	title     string
	locations []string
	failed    bool
	diffPath  string
	old, new  []byte // raw JSON strings; nil when absent
	hasDiff   bool
}

// scanView reads a stored tool view as json.Unmarshal into a
// session.ToolView would; false for anything else (a member it does not
// know, a value of another type), which the SDK path then shows.
func scanView(view []byte) (v storedView, ok bool) {
	good := true
	str := func(raw []byte, dst *string) {
		if string(raw) != "null" && !decodeString(raw, dst) {
			good = false
		}
	}
	ok = topFields(view, func(key, value []byte) {
		switch string(key) {
		case "title":
			str(value, &v.title)
		case "kind":
			var kind string
			str(value, &kind)
		case "failed":
			switch string(value) {
			case "true":
				v.failed = true
			case "false":
				v.failed = false
			case "null": // leaves it as it was
			default:
				good = false
			}
		case "locations":
			good = good && scanStrings(value, &v.locations)
		case "diff":
			good = good && !v.hasDiff && v.scanDiff(value) // a second diff would merge into the first
		default:
			good = false
		}
	})
	return v, ok && good
}

// scanDiff reads a view's diff member.
func (v *storedView) scanDiff(raw []byte) bool {
	if string(raw) == "null" {
		return true
	}
	good := true
	ok := topFields(raw, func(key, value []byte) {
		isNull := string(value) == "null"
		switch {
		case string(key) == "path":
			if !isNull && !decodeString(value, &v.diffPath) {
				good = false
			}
		case string(key) == "old" && !isNull:
			v.old = value
		case string(key) == "new" && !isNull:
			v.new = value
		case string(key) == "old" || string(key) == "new":
		default:
			good = false
		}
		if !isNull && len(value) > 0 && value[0] != '"' {
			good = false
		}
	})
	v.hasDiff = true
	return ok && good
}

// scanStrings reads a list of strings as json.Unmarshal into a []string
// would; false for anything else (a null in the list among them), which
// the SDK path then shows.
func scanStrings(raw []byte, dst *[]string) bool {
	if string(raw) == "null" {
		*dst = nil
		return true
	}
	if len(raw) < 2 || raw[0] != '[' {
		return false
	}
	*dst = (*dst)[:0]
	for i := skipSpace(raw, 1); i < len(raw)-1; {
		end := valueEnd(raw, i)
		var s string
		if end < 0 || raw[i] != '"' || !decodeString(raw[i:end], &s) {
			return false
		}
		*dst = append(*dst, s)
		if i = skipSpace(raw, end); raw[i] == ',' {
			if i = skipSpace(raw, i+1); i >= len(raw)-1 {
				return false // a trailing comma
			}
		} else if i != len(raw)-1 {
			return false
		}
	}
	return true
}

// decodeString decodes the JSON string raw into dst without encoding/json
// when it has no escapes.
func decodeString(raw []byte, dst *string) bool {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		if s := raw[1 : len(raw)-1]; canonicalPlain(s) {
			*dst = string(s)
			return true
		}
	}
	return json.Unmarshal(raw, dst) == nil && len(raw) > 0 && raw[0] == '"'
}

// canonicalPlain says whether s is printable ASCII that a JSON string holds
// as it is.
func canonicalPlain(s []byte) bool {
	for _, c := range s {
		if !plain[c] {
			return false
		}
	}
	return true
}

// toolViewNotification is the tool_call_update that ends a stored call
// shown with its view: toolResultUpdate(root, status, output, view) as the
// SDK encodes it, the output being a JSON string (raw). False when the view
// or the output has a shape only the SDK path shows (images).
func toolViewNotification(sessionID, root, callID string, output, view []byte) (json.RawMessage, bool) {
	if len(output) == 0 || output[0] != '"' {
		return nil, false
	}
	v, ok := scanView(view)
	if !ok {
		return nil, false
	}
	b := make([]byte, 0, min(len(output), maxShownOutput+16)+len(v.old)+len(v.new)+len(sessionID)+len(callID)+256)
	b = append(b, `{"sessionId":`...)
	b = appendString(b, sessionID)
	b = append(b, `,"update":{"content":[{"content":{"text":`...)
	if b, ok = appendText(b, output, maxShownOutput); !ok {
		return nil, false
	}
	b = append(b, `,"type":"text"},"type":"content"}`...)
	if v.hasDiff {
		if b, ok = appendDiff(b, root, v); !ok {
			return nil, false
		}
	}
	b = append(b, ']')
	if len(v.locations) > 0 {
		b = append(b, `,"locations":[`...)
		for i, p := range v.locations {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"path":`...)
			b = appendString(b, root+"/"+p)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"sessionUpdate":"tool_call_update","status":`...)
	if v.failed {
		b = append(b, `"failed"`...)
	} else {
		b = append(b, `"completed"`...)
	}
	if v.title != "" {
		b = append(b, `,"title":`...)
		b = appendString(b, v.title)
	}
	b = append(b, `,"toolCallId":`...)
	b = appendString(b, callID)
	return append(b, "}}"...), true
}

// appendDiff appends diffBlock(root, path, old, new) as the SDK encodes
// it, after the content before it.
func appendDiff(b []byte, root string, v storedView) ([]byte, bool) {
	ok := true
	b = append(b, `,{"newText":`...)
	if v.new == nil {
		b = append(b, `""`...)
	} else if b, ok = appendText(b, v.new, math.MaxInt); !ok {
		return b, false
	}
	if v.old != nil && string(v.old) != `""` {
		b = append(b, `,"oldText":`...)
		if b, ok = appendText(b, v.old, math.MaxInt); !ok {
			return b, false
		}
	}
	b = append(b, `,"path":`...)
	b = appendString(b, root+"/"+v.diffPath)
	return append(b, `,"type":"diff"}`...), true
}
