package daemon

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// A replay writes the strings of stored items into its notifications. Most
// of them are already in the exact form encoding/json writes — hearth
// encoded them itself (tool outputs, views, arguments) — so the replay
// copies their bytes after checking that form, instead of decoding and
// encoding them again; a string in another form (a model's text with "<"
// in it, an escape encoding/json does not write) is decoded and encoded.
// Either way the notification is byte for byte the SDK's
// (TestReplayMatchesSDK).

// appendString appends s as the SDK encodes it: as json.Marshal does, but
// for bytes that are not UTF-8 (a clip can cut a character), which become
// U+FFFD (json.Marshal writes "\ufffd"; the SDK decodes that and writes the
// character).
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !plain[s[i]] {
			if !utf8.ValidString(s) {
				s = replaceInvalid(s)
			}
			e, _ := json.Marshal(s) // a string always encodes
			return append(b, e...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// replaceInvalid replaces each byte of s that is not part of a UTF-8
// character with U+FFFD, as encoding/json does.
func replaceInvalid(s string) string {
	var out strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			out.WriteRune(utf8.RuneError)
		} else {
			out.WriteString(s[i : i+size])
		}
		i += size
	}
	return out.String()
}

// plain marks the bytes json.Marshal writes as they are in a string:
// printable ASCII but for the quote, the backslash and the HTML
// characters it escapes.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = true
	}
	for _, c := range `"\<>&` {
		t[c] = false
	}
	return t
}()

// appendText appends the JSON string raw (as stored) as json.Marshal
// encodes clip(s, max) of its value s. Up to the cut it copies raw when
// raw is in encoding/json's form there; otherwise it decodes. False when
// raw is not a JSON string.
func appendText(b, raw []byte, max int) ([]byte, bool) {
	if out, ok := appendCanonical(b, raw, max); ok {
		return out, true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return b, false
	}
	return appendString(b, clip(s, max)), true
}

// appendCanonical is appendText's copy: false, with b unchanged, where raw
// strays from encoding/json's form before the cut.
func appendCanonical(b, raw []byte, max int) ([]byte, bool) {
	cut, ok := canonicalPrefix(raw, max)
	switch {
	case !ok:
		return b, false
	case cut == len(raw):
		return append(b, raw...), true
	}
	b = append(b, raw[:cut]...)
	return append(b, `\n…"`...), true
}

// canonicalPrefix checks that the JSON string raw is in encoding/json's form
// up to where its value reaches max bytes, and returns that offset in raw
// (len(raw) when the value is not longer). False also when the cut would
// fall inside a character (clip cuts bytes, which encoding/json then
// replaces).
func canonicalPrefix(raw []byte, max int) (cut int, ok bool) {
	end := len(raw) - 1
	if end < 1 || raw[0] != '"' || raw[end] != '"' {
		return 0, false
	}
	n := 0 // bytes of the value before raw[i]
	for i := 1; i < end; {
		// A run of plain bytes, up to the cut (max may be MaxInt: no sum).
		run := end
		if max-n < end-i {
			run = i + max - n
		}
		j := i
		for j < run && plain[raw[j]] {
			j++
		}
		n += j - i
		if i = j; i == end {
			break
		}
		if n == max { // more follows: clipped here, at a character's start
			return i, true
		}
		switch c := raw[i]; {
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(raw[i:end])
			if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' || n+size > max {
				return 0, false
			}
			i += size
			n += size
		case c == '\\':
			size, width := escape(raw[i:end])
			if size == 0 || n+size > max {
				return 0, false
			}
			i += width
			n += size
		default: // a control character, a bare quote, or <, >, & unescaped
			return 0, false
		}
	}
	return len(raw), true
}

// escape reads the escape at the start of e and returns the bytes of the
// value it stands for and its own length; 0 if encoding/json would not
// write it so.
func escape(e []byte) (size, width int) {
	if len(e) < 2 {
		return 0, 0
	}
	switch e[1] {
	case '"', '\\', 'n', 'r', 't', 'b', 'f':
		return 1, 2
	case 'u':
	default:
		return 0, 0
	}
	if len(e) < 6 {
		return 0, 0
	}
	switch h := string(e[2:6]); h {
	case "003c", "003e", "0026":
		return 1, 6
	case "2028", "2029":
		return 3, 6
	default:
		// \u00XX, lower-case, for the control characters without a short
		// escape.
		if h[0] != '0' || h[1] != '0' || (h[2] != '0' && h[2] != '1') {
			return 0, 0
		}
		v := hexDigit(h[2])<<4 | hexDigit(h[3])
		if hexDigit(h[3]) < 0 || v == '\b' || v == '\t' || v == '\n' || v == '\f' || v == '\r' {
			return 0, 0
		}
		return 1, 6
	}
}

func hexDigit(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	}
	return -1 // upper case too: encoding/json writes lower
}

// appendJSON appends the JSON value raw as json.Marshal writes it once
// decoded into an interface{} (what the SDK sends as a tool call's
// rawInput): without spaces, object keys in order, strings in
// encoding/json's form. False for what it does not rewrite exactly, which
// the caller decodes: numbers other than integers a float64 holds, keys
// that are not plain ASCII, a key given twice, nesting deeper than
// maxJSONDepth.
func appendJSON(b, raw []byte) ([]byte, bool) {
	b, end, ok := appendValue(b, raw, skipSpace(raw, 0), 0)
	return b, ok && skipSpace(raw, end) == len(raw)
}

// maxJSONDepth bounds appendJSON's recursion; encoding/json takes deeper
// values.
const maxJSONDepth = 64

// appendValue appends the value at raw[i] and returns where it ends.
func appendValue(b, raw []byte, i, depth int) ([]byte, int, bool) {
	if i >= len(raw) || depth > maxJSONDepth {
		return b, i, false
	}
	switch c := raw[i]; {
	case c == '"':
		end := stringEnd(raw, i)
		if end < 0 {
			return b, i, false
		}
		b, ok := appendText(b, raw[i:end], math.MaxInt)
		return b, end, ok
	case c == '{':
		return appendObject(b, raw, i, depth+1)
	case c == '[':
		return appendArray(b, raw, i, depth+1)
	case c == '-' || '0' <= c && c <= '9':
		end, ok := canonicalInt(raw, i)
		return append(b, raw[i:end]...), end, ok
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(raw)-i >= len(lit) && string(raw[i:i+len(lit)]) == lit {
			return append(b, lit...), i + len(lit), true
		}
	}
	return b, i, false
}

// appendArray appends the array at raw[i].
func appendArray(b, raw []byte, i, depth int) ([]byte, int, bool) {
	b = append(b, '[')
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return append(b, ']'), i + 1, true
	}
	for {
		var ok bool
		if b, i, ok = appendValue(b, raw, i, depth); !ok {
			return b, i, false
		}
		if i = skipSpace(raw, i); i >= len(raw) {
			return b, i, false
		}
		switch raw[i] {
		case ']':
			return append(b, ']'), i + 1, true
		case ',':
			b = append(b, ',')
			i = skipSpace(raw, i+1)
		default:
			return b, i, false
		}
	}
}

// member is an object's member: its key (plain ASCII, between the quotes)
// and its value, as written.
type member struct{ key, value []byte }

// appendObject appends the object at raw[i] with its members sorted by key,
// as encoding/json writes a map.
func appendObject(b, raw []byte, i, depth int) ([]byte, int, bool) {
	var members []member
	i = skipSpace(raw, i+1)
	for i < len(raw) && (raw[i] != '}' || len(members) > 0) {
		if raw[i] != '"' {
			return b, i, false
		}
		kend := stringEnd(raw, i)
		if kend < 0 || !canonicalPlain(raw[i+1:kend-1]) {
			return b, i, false // plain: sorting the written keys sorts the keys
		}
		key := raw[i+1 : kend-1]
		if i = skipSpace(raw, kend); i >= len(raw) || raw[i] != ':' {
			return b, i, false
		}
		i = skipSpace(raw, i+1)
		vend := valueEnd(raw, i)
		if vend < 0 {
			return b, i, false
		}
		members = append(members, member{key, raw[i:vend]})
		if i = skipSpace(raw, vend); i >= len(raw) || raw[i] == '}' {
			break
		}
		if raw[i] != ',' {
			return b, i, false
		}
		i = skipSpace(raw, i+1)
	}
	if i >= len(raw) {
		return b, i, false
	}
	slices.SortFunc(members, func(x, y member) int { return bytes.Compare(x.key, y.key) })
	b = append(b, '{')
	for k, m := range members {
		if k > 0 {
			if bytes.Equal(members[k-1].key, m.key) {
				return b, i, false // decoding keeps the last: left to encoding/json
			}
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, m.key...)
		b = append(b, '"', ':')
		var ok bool
		var end int
		if b, end, ok = appendValue(b, m.value, 0, depth); !ok || end != len(m.value) {
			return b, i, false
		}
	}
	return append(b, '}'), i + 1, true
}

// canonicalInt checks an integer small enough that a float64 holds it and
// encoding/json writes it back digit for digit (no -0, no leading zero).
func canonicalInt(raw []byte, i int) (int, bool) {
	start := i
	if raw[i] == '-' {
		i++
	}
	digits := i
	for i < len(raw) && '0' <= raw[i] && raw[i] <= '9' {
		i++
	}
	n := i - digits
	switch {
	case n == 0 || n > 15:
		return i, false
	case raw[digits] == '0' && (n > 1 || digits > start):
		return i, false // 01, -0
	case i < len(raw) && (raw[i] == '.' || raw[i] == 'e' || raw[i] == 'E'):
		return i, false
	}
	return i, true
}
