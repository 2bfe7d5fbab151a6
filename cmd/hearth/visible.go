package main

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// What the CLI prints of a string it did not write — the model's answer, a
// tool's title or output, a file name, a command, an error from the daemon,
// the store — goes through visibleText or visibleLine, so that a terminal
// shows what is there instead of acting on it: a carriage return, an erase
// or a cursor move cannot hide part of a command, a title sequence cannot
// rename the window, a bidi override cannot reorder what is read.
//
// Made visible (Go's notation, which the warning before a question names):
// \r, \n and \t as such; every other C0 control and DEL as \xNN (ESC is
// \x1b); C1 controls (U+0080–U+009F, which some terminals take as ESC
// sequences) and the Unicode bidi controls (U+061C, U+200E, U+200F,
// U+202A–U+202E, U+2066–U+2069) as \uNNNN; a byte that is not UTF-8 as
// \xNN. A backslash is left alone: commands and code are full of them, and
// the warning says when a question holds escapes.

// visibleText is s for the terminal keeping its lines: newlines and tabs
// stay as they are (an answer's Markdown, a diff, a summary).
func visibleText(s string) string { return visible(s, true) }

// visibleLine is s as one line: a newline or tab is shown escaped too (a
// title, a path, a command).
func visibleLine(s string) string { return visible(s, false) }

// hasControls reports whether visibleLine changes s.
func hasControls(s string) bool { return needsEscape(s, false) }

func visible(s string, keepLines bool) string {
	if !needsEscape(s, keepLines) {
		return s
	}
	const hex = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&15])
		case !escapes(r, keepLines):
			b.WriteString(s[i : i+size])
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80:
			b.WriteString(`\x`)
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&15])
		default:
			b.WriteString(`\u`)
			for shift := 12; shift >= 0; shift -= 4 {
				b.WriteByte(hex[r>>shift&15])
			}
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string, keepLines bool) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || escapes(r, keepLines) {
			return true
		}
		i += size
	}
	return false
}

// escapes reports whether r is shown escaped.
func escapes(r rune, keepLines bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return !keepLines
	case r < 0x20 || r == 0x7f:
		return true
	case r < 0x80:
		return false
	case r <= 0x9f:
		return true
	}
	return unicode.Is(unicode.Bidi_Control, r)
}
