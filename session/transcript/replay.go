package transcript

import (
	"bytes"
	"encoding/json"
	"slices"
)

// The replay form of an item is what goes back to the model as input
// (docs/ARCHITECTURE.md, "The flow of a turn"). Under store:false the server refuses any
// input item that carries the id of an earlier output item — it looks the
// id up and finds nothing — so every item drops its top-level "id" and
// "status". A reasoning item keeps its summary and encrypted_content (the
// model's sealed thinking); one without encrypted_content carries nothing
// and is left out. A web_search_call (the hosted tool's, which needs no
// answer) keeps its status beside its action: the API's input item
// requires both. The store keeps items exactly as received; requests
// use this form, and the incremental rule compares replay forms. The
// form is cut from the item's bytes, never decoded and encoded again: the
// members left keep their order and bytes.

// ReplayForm returns item as it is sent as input, and false when it is
// left out. Items without id or status (everything hearth writes itself)
// come back as they are, not copied.
func ReplayForm(item json.RawMessage) (json.RawMessage, bool) {
	ms, keep, cut := replayCuts(item)
	if !cut {
		return item, keep
	}
	return joinMembers(make([]byte, 0, len(item)), item, ms), true
}

// ReplayInPlace is ReplayForm made within item's own bytes, which it
// overwrites: an output item the conversation owns, once stored, becomes
// its replay form without a second copy (an answer can be megabytes).
func ReplayInPlace(item json.RawMessage) (json.RawMessage, bool) {
	ms, keep, cut := replayCuts(item)
	if !cut {
		return item, keep
	}
	return joinMembers(item[:0], item, ms), true
}

// member is the bytes of one top-level member of an object: "name":value.
type member struct {
	start, end int
	drop       bool
}

// replayCuts reads item's top-level members, marking id and status to
// drop: keep is false for a reasoning item without encrypted_content, cut
// reports whether members must go. An item that is not an object this
// reads is kept as it is (the server says what is wrong with it).
func replayCuts(item []byte) (ms []member, keep, cut bool) {
	if !mayCarry(item) {
		return nil, true, false
	}
	ms, names, ok := topMembers(item)
	if !ok {
		return nil, true, false
	}
	reasoning, sealed, search, status := false, false, false, -1
	for i, m := range ms {
		value := bytes.TrimSpace(item[names[i]:m.end])
		value = bytes.TrimSpace(value[bytes.IndexByte(value, ':')+1:])
		switch name := item[m.start:names[i]]; string(name) {
		case `"type"`:
			reasoning = string(value) == `"reasoning"`
			search = string(value) == `"web_search_call"`
		case `"encrypted_content"`:
			sealed = string(value) != "null" && string(value) != `""`
		case `"status"`:
			status = i
			ms[i].drop, cut = true, true
		case `"id"`:
			ms[i].drop, cut = true, true
		}
	}
	if reasoning && !sealed {
		return nil, false, false
	}
	if search && status >= 0 {
		ms[status].drop = false
		cut = slices.ContainsFunc(ms, func(m member) bool { return m.drop })
	}
	return ms, true, cut
}

// joinMembers writes into dst the object of item's members that are not
// dropped. dst may be item[:0]: it never writes ahead of what it reads.
func joinMembers(dst, item []byte, ms []member) json.RawMessage {
	dst = append(dst, '{')
	first := true
	for _, m := range ms {
		if m.drop {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, item[m.start:m.end]...)
	}
	return append(dst, '}')
}

// topMembers finds item's top-level members, and where each one's name
// ends; false when item is not one JSON object it can read.
func topMembers(item []byte) (ms []member, names []int, ok bool) {
	i := skipSpace(item, 0)
	if i >= len(item) || item[i] != '{' {
		return nil, nil, false
	}
	i = skipSpace(item, i+1)
	if i < len(item) && item[i] == '}' {
		return nil, nil, skipSpace(item, i+1) == len(item)
	}
	for i < len(item) {
		start := i
		if item[i] != '"' {
			return nil, nil, false
		}
		nameEnd := skipValue(item, i)
		if nameEnd < 0 {
			return nil, nil, false
		}
		i = skipSpace(item, nameEnd)
		if i >= len(item) || item[i] != ':' {
			return nil, nil, false
		}
		end := skipValue(item, skipSpace(item, i+1))
		if end < 0 {
			return nil, nil, false
		}
		ms, names = append(ms, member{start: start, end: end}), append(names, nameEnd)
		i = skipSpace(item, end)
		switch {
		case i < len(item) && item[i] == ',':
			i = skipSpace(item, i+1)
		case i < len(item) && item[i] == '}':
			return ms, names, skipSpace(item, i+1) == len(item)
		default:
			return nil, nil, false
		}
	}
	return nil, nil, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns where the JSON value at b[i] ends, or -1. It finds the
// value's extent (strings, nesting); the item is JSON the API sent or
// hearth made, so it does not check more.
func skipValue(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			i++
			for i < len(b) && b[i] != '"' {
				if b[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(b) {
				return -1
			}
			i++
		case '{', '[':
			depth++
			i++
		case '}', ']':
			if depth == 0 {
				return i
			}
			depth--
			i++
		case ',', ' ', '\t', '\n', '\r', ':':
			if depth == 0 {
				return i
			}
			i++
		default:
			i++
		}
		if depth == 0 && i > 0 && (b[i-1] == '"' || b[i-1] == '}' || b[i-1] == ']') {
			return i
		}
	}
	if depth == 0 {
		return i
	}
	return -1
}

// mayCarry is a cheap test that item may hold an id, a status or be a
// reasoning item: most input items (user messages, tool outputs) skip the
// scan.
func mayCarry(item json.RawMessage) bool {
	return bytes.Contains(item, []byte(`"id"`)) || bytes.Contains(item, []byte(`"status"`)) ||
		bytes.Contains(item, []byte(`"reasoning"`))
}

// ReplayForms appends the replay forms of items to dst.
func ReplayForms(dst, items []json.RawMessage) []json.RawMessage {
	for _, it := range items {
		if r, ok := ReplayForm(it); ok {
			dst = append(dst, r)
		}
	}
	return dst
}
