package main

import "testing"

// visibleText keeps lines and tabs; visibleLine makes one line; both show
// every other control, C1 control, bidi control and stray byte escaped,
// and leave printable text (backslashes and non-ASCII included) alone.
func TestVisible(t *testing.T) {
	cases := []struct{ in, text, line string }{
		{"plain `code` and ünïcode → ok", "plain `code` and ünïcode → ok", "plain `code` and ünïcode → ok"},
		{"a\\x1b stays", "a\\x1b stays", "a\\x1b stays"},
		{"one\ntwo\tthree", "one\ntwo\tthree", `one\ntwo\tthree`},
		{"rm -rf x #\r\x1b[2K$ ls", `rm -rf x #\r\x1b[2K$ ls`, `rm -rf x #\r\x1b[2K$ ls`},
		{"\x1b]0;title\x07x", `\x1b]0;title\x07x`, `\x1b]0;title\x07x`},
		{"nul\x00del\x7f", `nul\x00del\x7f`, `nul\x00del\x7f`},
		{"c1\u009b31m\u0085", `c1\u009b31m\u0085`, `c1\u009b31m\u0085`},
		{"bidi \u202egnp.exe\u202c \u2066x\u2069 \u200e\u200f\u061c", `bidi \u202egnp.exe\u202c \u2066x\u2069 \u200e\u200f\u061c`, `bidi \u202egnp.exe\u202c \u2066x\u2069 \u200e\u200f\u061c`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`, `bad \xff\xfe utf8`},
		{"", "", ""},
	}
	for _, c := range cases {
		if got := visibleText(c.in); got != c.text {
			t.Errorf("visibleText(%q) = %q, want %q", c.in, got, c.text)
		}
		if got := visibleLine(c.in); got != c.line {
			t.Errorf("visibleLine(%q) = %q, want %q", c.in, got, c.line)
		}
		if got, want := hasControls(c.in), c.line != c.in; got != want {
			t.Errorf("hasControls(%q) = %v, want %v", c.in, got, want)
		}
	}
}
