package daemon

import (
	"bytes"
	"strings"
)

// Stored items are valid JSON (the store took them from the model API or
// built them), and a replay needs only a few small fields of each: the
// encrypted reasoning and long outputs it does not show are most of the
// bytes. topFields walks an object's top level once, skipping strings with
// IndexByte, so a long session's replay does not validate and decode every
// byte it is not going to show (encoding/json scans each value twice or
// more). Anything it does not understand makes it return false and the
// caller falls back to encoding/json.

// topFields calls f with each top-level key (raw, without quotes; keys with
// escapes are passed as written) and the raw bytes of its value.
func topFields(b []byte, f func(key, value []byte)) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return true
	}
	for i < len(b) {
		if b[i] != '"' {
			return false
		}
		end := stringEnd(b, i)
		if end < 0 {
			return false
		}
		key := b[i+1 : end-1]
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		vend := valueEnd(b, i)
		if vend < 0 {
			return false
		}
		f(key, b[i:vend])
		i = skipSpace(b, vend)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return true
		default:
			return false
		}
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the string starting at b[i] == '"',
// or -1.
func stringEnd(b []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		i += j
		// The quote ends the string unless an odd number of backslashes
		// precede it.
		n := 0
		for k := i - 1; k >= 0 && b[k] == '\\'; k-- {
			n++
		}
		i++
		if n%2 == 0 {
			return i
		}
	}
}

// valueEnd returns the index just past the value starting at b[i], or -1.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = stringEnd(b, i)
				if i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	default: // number, true, false, null
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' && b[j] != '\t' && b[j] != '\r' {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}

// scanSummary reads a reasoning item's summary parts (their texts) as
// json.Unmarshal into replayItem.Summary would; false for anything it does
// not read the same way, which the caller leaves to encoding/json.
func scanSummary(value []byte, r *replayItem) bool {
	if string(value) == "null" {
		r.Summary = nil
		return true
	}
	if len(value) < 2 || value[0] != '[' {
		return false
	}
	r.Summary = r.Summary[:0]
	for i := skipSpace(value, 1); i < len(value)-1; {
		end := valueEnd(value, i)
		if end < 0 {
			return false
		}
		var text string
		good := true
		if !topFields(value[i:end], func(key, v []byte) {
			switch {
			case string(key) == "text":
				good = good && (string(v) == "null" || decodeString(v, &text))
			case strings.EqualFold(string(key), "text"):
				good = false // encoding/json would take it
			}
		}) || !good {
			return false
		}
		r.Summary = append(r.Summary, struct {
			Text string `json:"text"`
		}{text})
		if i = skipSpace(value, end); value[i] == ',' {
			if i = skipSpace(value, i+1); i >= len(value)-1 {
				return false // a trailing comma
			}
		} else if i != len(value)-1 {
			return false
		}
	}
	return true
}
