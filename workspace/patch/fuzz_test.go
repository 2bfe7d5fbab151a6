package patch

import (
	"strings"
	"testing"
)

// FuzzParsePatch parses arbitrary text as a patch, and applies the hunks of
// its updates to arbitrary file text. It checks that nothing panics; that
// an error names a line of the patch or says the patch is empty or changes
// nothing; that a parsed patch, rendered, parses back the same, also when
// wrapped in the shell heredoc models write; and that an applied update
// leaves as many lines as the file had, less the removed ones, plus the
// added ones.
//
//	go test ./workspace/patch -run '^$' -fuzz FuzzParsePatch -fuzztime 1m
//
// Seeds: below, and testdata/fuzz/FuzzParsePatch.
func FuzzParsePatch(f *testing.F) {
	for _, seed := range []struct{ patch, file string }{
		{"*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n", ""},
		{"*** Begin Patch\n*** Update File: a.go\n@@ func A() {\n \tx := 1\n-\treturn x\n+\treturn x + 1\n }\n*** End Patch\n", "package a\n\nfunc A() {\n\tx := 1\n\treturn x\n}\n"},
		{"*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@\n-last\n+final\n*** End of File\n*** Delete File: c\n*** End Patch", "first\nlast"},
		{"apply_patch <<'EOF'\r\n*** Begin Patch\r\n*** Update File: w\r\n  x  \r\n-y\r\n\r\n*** End Patch\r\nEOF\r\n", "x\r\ny\r\n"},
		{"*** Begin Patch\n*** Update File: e\n+only added\n*** End Patch\n", ""},
		{"*** Begin Patch\n*** Update File: x\n@@\n a\n@@\n a\n-a\n*** End Patch\n", "a\na\na\n"},
		{"*** Begin Patch\n*** Update File: x\n@@ h\n@@ \n\n \n*** End Patch", "\n\n"},
	} {
		f.Add(seed.patch, seed.file)
	}
	f.Fuzz(func(t *testing.T, text, file string) {
		p, err := Parse(text)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "line ") && !strings.HasPrefix(msg, "the patch ") {
				t.Fatalf("error %q names no line of the patch", msg)
			}
			return
		}
		rendered := p.String()
		back, err := Parse(rendered)
		if err != nil || !samePatch(back, p) {
			t.Fatalf("%q parsed to %+v; rendered as %q it parses to %+v, %v", text, p.Ops, rendered, back, err)
		}
		if !strings.Contains(rendered, "\nEOF\n") {
			wrapped, err := Parse("apply_patch <<'EOF'\n" + rendered + "EOF\n")
			if err != nil || !samePatch(wrapped, p) {
				t.Fatalf("in a heredoc, %q parses to %+v, %v", rendered, wrapped, err)
			}
		}
		for _, op := range p.Ops {
			if op.Kind == OpUpdate {
				checkApplied(t, file, op.Hunks)
			}
		}
	})
}

// checkApplied applies hunks to file and checks the count of lines.
func checkApplied(t *testing.T, file string, hunks []Hunk) {
	t.Helper()
	out, err := ApplyHunks("f", file, hunks)
	if err != nil {
		if !strings.HasPrefix(err.Error(), "hunk ") {
			t.Fatalf("error %q names no hunk", err)
		}
		return
	}
	want := len(splitText(file).lines)
	for _, h := range hunks {
		for _, l := range h.lines {
			switch l.op {
			case '-':
				want--
			case '+':
				want++
			}
		}
	}
	if got := len(splitText(out).lines); got != want {
		t.Fatalf("applied to %q the hunks %+v give %q: %d lines, want %d", file, hunks, out, got, want)
	}
}
