package patch

import (
	"reflect"
	"strings"
	"testing"
)

func TestParsePatch(t *testing.T) {
	tests := []struct {
		name, text string
		want       []Op
	}{
		{"add", "*** Begin Patch\n*** Add File: a/b.txt\n+one\n+\n+two\n*** End Patch\n",
			[]Op{{Kind: OpAdd, Path: "a/b.txt", Lines: []string{"one", "", "two"}, Line: 2}}},
		{"add of one empty line", "*** Begin Patch\n*** Add File: empty\n+\n*** End Patch",
			[]Op{{Kind: OpAdd, Path: "empty", Lines: []string{""}, Line: 2}}},
		{"update without hunks", "*** Begin Patch\n*** Update File: a\n*** End Patch\n",
			[]Op{{Kind: OpUpdate, Path: "a", Line: 2}}},
		{"hunks of @@ lines alone", "*** Begin Patch\n*** Update File: a\n-x\n@@ f\n*** End of File\n*** Update File: b\n@@\n*** End Patch\n",
			[]Op{
				{Kind: OpUpdate, Path: "a", Line: 2, Hunks: []Hunk{{line: 3, lines: []hunkLine{{'-', "x"}}}, {line: 4, headers: []string{"f"}, eof: true}}},
				{Kind: OpUpdate, Path: "b", Line: 6, Hunks: []Hunk{{line: 7}}},
			}},
		{"End of File after blank lines", "*** Begin Patch\n*** Update File: a\n-x\n\n*** End of File\n*** End Patch\n",
			[]Op{{Kind: OpUpdate, Path: "a", Line: 2, Hunks: []Hunk{{line: 3, lines: []hunkLine{{'-', "x"}}, eof: true}}}}},
		{"delete", "*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch\n",
			[]Op{{Kind: OpDelete, Path: "gone.txt", Line: 2}}},
		{"update, first hunk without @@", "*** Begin Patch\n*** Update File: m.go\n a\n-b\n+c\n*** End Patch\n",
			[]Op{{Kind: OpUpdate, Path: "m.go", Line: 2, Hunks: []Hunk{{line: 3, lines: []hunkLine{{' ', "a"}, {'-', "b"}, {'+', "c"}}}}}}},
		{"update, headers, several hunks, end of file", "*** Begin Patch\n*** Update File: m.go\n*** Move to: n.go\n@@ type T struct\n@@   func (T) M() {  \n-x\n+y\n@@\n z\n+w\n*** End of File\n*** End Patch\n",
			[]Op{{Kind: OpUpdate, Path: "m.go", MoveTo: "n.go", Line: 2, Hunks: []Hunk{
				{line: 4, headers: []string{"type T struct", "func (T) M() {"}, lines: []hunkLine{{'-', "x"}, {'+', "y"}}},
				{line: 8, lines: []hunkLine{{' ', "z"}, {'+', "w"}}, eof: true},
			}}}},
		{"lines that look like markers", "*** Begin Patch\n*** Update File: notes.org\n *** End Patch\n-*** Delete File: x\n+*** Add File: y\n*** Add File: z\n+*** End Patch\n*** End Patch\n",
			[]Op{
				{Kind: OpUpdate, Path: "notes.org", Line: 2, Hunks: []Hunk{{line: 3, lines: []hunkLine{{' ', "*** End Patch"}, {'-', "*** Delete File: x"}, {'+', "*** Add File: y"}}}}},
				{Kind: OpAdd, Path: "z", Lines: []string{"*** End Patch"}, Line: 6},
			}},
		{"pure move", "*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch\n",
			[]Op{{Kind: OpUpdate, Path: "a", MoveTo: "b", Line: 2}}},
		{"blank lines: inside a hunk context, at its end spacing", "*** Begin Patch\n*** Update File: m\n@@\n a\n\n-b\n\n\n*** Delete File: d\n\n*** End Patch\n\n\n",
			[]Op{
				{Kind: OpUpdate, Path: "m", Line: 2, Hunks: []Hunk{{line: 3, lines: []hunkLine{{' ', "a"}, {' ', ""}, {'-', "b"}}}}},
				{Kind: OpDelete, Path: "d", Line: 9},
			}},
		{"CRLF and no final newline", "*** Begin Patch\r\n*** Update File: m\r\n@@\r\n-a\r\n+b\r\n*** End Patch",
			[]Op{{Kind: OpUpdate, Path: "m", Line: 2, Hunks: []Hunk{{line: 3, lines: []hunkLine{{'-', "a"}, {'+', "b"}}}}}}},
		{"heredoc wrapper", "apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: d\n*** End Patch\nEOF\n",
			[]Op{{Kind: OpDelete, Path: "d", Line: 2}}},
		{"double-quoted heredoc delimiter", "apply_patch <<\"PATCH\"\n*** Begin Patch\n*** Delete File: d\n*** End Patch\nPATCH",
			[]Op{{Kind: OpDelete, Path: "d", Line: 2}}},
		{"bare heredoc delimiter", "  apply_patch <<EOF\n*** Begin Patch\n*** Delete File: d\n*** End Patch\nEOF\n",
			[]Op{{Kind: OpDelete, Path: "d", Line: 2}}},
		{"leading blank lines and spaces around markers", "\n\n  *** Begin Patch  \n*** Delete File:   d  \n *** End Patch\n",
			[]Op{{Kind: OpDelete, Path: "d", Line: 4}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse(tt.text)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(p.Ops, tt.want) {
				t.Fatalf("ops\n got %+v\nwant %+v", p.Ops, tt.want)
			}
			back, err := Parse(p.String())
			if err != nil || !samePatch(back, p) {
				t.Fatalf("the rendered patch parses to %+v, %v:\n%s", back, err, p)
			}
		})
	}
}

func TestParsePatchErrors(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"empty", "", `the patch is empty: expected "*** Begin Patch" as its first line`},
		{"blank", "\n \n", `the patch is empty`},
		{"no begin", "*** Update File: a\n", `line 1: expected "*** Begin Patch"`},
		{"no end", "*** Begin Patch\n*** Delete File: a\n", `line 3: expected "*** End Patch" as the last line (is the patch cut short?)`},
		{"nothing", "*** Begin Patch\n*** End Patch\n", "the patch changes no file"},
		{"after end", "*** Begin Patch\n*** Delete File: a\n*** End Patch\nmore\n", `line 4: expected nothing after "*** End Patch", got "more"`},
		{"unknown op", "*** Begin Patch\n*** Rename File: a\n*** End Patch\n", `line 2: expected "*** Add File: PATH", "*** Update File: PATH", "*** Delete File: PATH" or "*** End Patch", got "*** Rename File: a"`},
		{"no path", "*** Begin Patch\n*** Delete File:\n*** End Patch\n", `line 2: "*** Delete File:" needs a path after the colon`},
		{"empty move", "*** Begin Patch\n*** Update File: a\n*** Move to: \n-x\n*** End Patch\n", `line 3: "*** Move to:" needs a path after the colon`},
		{"bad hunk line", "*** Begin Patch\n*** Update File: a\n@@\n x\nfoo\n*** End Patch\n", `line 5: expected a hunk line starting with ' ', '-' or '+', got "foo"`},
		{"add line without plus", "*** Begin Patch\n*** Add File: a\n+x\ny\n*** End Patch\n", `line 4: expected a line starting with '+'`},
		{"empty add", "*** Begin Patch\n*** Add File: a\n\n*** End Patch\n", `line 2: "*** Add File: a" has no lines: give the new file's lines, each starting with '+'`},
		{"end of file alone", "*** Begin Patch\n*** Update File: a\n*** End of File\n*** End Patch\n", `line 3: "*** End of File" must follow the lines of an update's last hunk`},
		{"end of file between hunks", "*** Begin Patch\n*** Update File: a\n-x\n*** End of File\n@@\n-y\n*** End Patch\n", `line 5: expected the next file's operation or "*** End Patch" after "*** End of File", which ends the update's last hunk, got "@@"`},
		{"heredoc not closed as a quote", "apply_patch <<'EOF\n*** Begin Patch\n", `expected "*** Begin Patch" as the first line`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse(tt.text)
			if err == nil {
				t.Fatalf("parsed into %+v", p)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

// samePatch compares two patches by what they do: the lines each starts
// at in the patch text may differ.
func samePatch(a, b *Patch) bool {
	if len(a.Ops) != len(b.Ops) {
		return false
	}
	for i := range a.Ops {
		x, y := a.Ops[i], b.Ops[i]
		if x.Kind != y.Kind || x.Path != y.Path || x.MoveTo != y.MoveTo || !slicesEqualNil(x.Lines, y.Lines) || len(x.Hunks) != len(y.Hunks) {
			return false
		}
		for j := range x.Hunks {
			hx, hy := x.Hunks[j], y.Hunks[j]
			if !slicesEqualNil(hx.headers, hy.headers) || hx.eof != hy.eof || !reflect.DeepEqual(hx.lines, hy.lines) {
				return false
			}
		}
	}
	return true
}

func slicesEqualNil(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}
