package workspace

import (
	"reflect"
	"strings"
	"testing"
)

func TestParsePatch(t *testing.T) {
	tests := []struct {
		name, text string
		want       []patchOp
	}{
		{"add", "*** Begin Patch\n*** Add File: a/b.txt\n+one\n+\n+two\n*** End Patch\n",
			[]patchOp{{kind: opAdd, path: "a/b.txt", lines: []string{"one", "", "two"}, line: 2}}},
		{"empty add", "*** Begin Patch\n*** Add File: empty\n*** End Patch",
			[]patchOp{{kind: opAdd, path: "empty", line: 2}}},
		{"delete", "*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch\n",
			[]patchOp{{kind: opDelete, path: "gone.txt", line: 2}}},
		{"update, first hunk without @@", "*** Begin Patch\n*** Update File: m.go\n a\n-b\n+c\n*** End Patch\n",
			[]patchOp{{kind: opUpdate, path: "m.go", line: 2, hunks: []hunk{{line: 3, lines: []hunkLine{{' ', "a"}, {'-', "b"}, {'+', "c"}}}}}}},
		{"update, headers, several hunks, end of file", "*** Begin Patch\n*** Update File: m.go\n*** Move to: n.go\n@@ type T struct\n@@   func (T) M() {  \n-x\n+y\n@@\n z\n+w\n*** End of File\n*** End Patch\n",
			[]patchOp{{kind: opUpdate, path: "m.go", moveTo: "n.go", line: 2, hunks: []hunk{
				{line: 4, headers: []string{"type T struct", "func (T) M() {"}, lines: []hunkLine{{'-', "x"}, {'+', "y"}}},
				{line: 8, lines: []hunkLine{{' ', "z"}, {'+', "w"}}, eof: true},
			}}}},
		{"lines that look like markers", "*** Begin Patch\n*** Update File: notes.org\n *** End Patch\n-*** Delete File: x\n+*** Add File: y\n*** Add File: z\n+*** End Patch\n*** End Patch\n",
			[]patchOp{
				{kind: opUpdate, path: "notes.org", line: 2, hunks: []hunk{{line: 3, lines: []hunkLine{{' ', "*** End Patch"}, {'-', "*** Delete File: x"}, {'+', "*** Add File: y"}}}}},
				{kind: opAdd, path: "z", lines: []string{"*** End Patch"}, line: 6},
			}},
		{"pure move", "*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch\n",
			[]patchOp{{kind: opUpdate, path: "a", moveTo: "b", line: 2}}},
		{"blank lines: inside a hunk context, at its end spacing", "*** Begin Patch\n*** Update File: m\n@@\n a\n\n-b\n\n\n*** Delete File: d\n\n*** End Patch\n\n\n",
			[]patchOp{
				{kind: opUpdate, path: "m", line: 2, hunks: []hunk{{line: 3, lines: []hunkLine{{' ', "a"}, {' ', ""}, {'-', "b"}}}}},
				{kind: opDelete, path: "d", line: 9},
			}},
		{"CRLF and no final newline", "*** Begin Patch\r\n*** Update File: m\r\n@@\r\n-a\r\n+b\r\n*** End Patch",
			[]patchOp{{kind: opUpdate, path: "m", line: 2, hunks: []hunk{{line: 3, lines: []hunkLine{{'-', "a"}, {'+', "b"}}}}}}},
		{"heredoc wrapper", "apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: d\n*** End Patch\nEOF\n",
			[]patchOp{{kind: opDelete, path: "d", line: 2}}},
		{"double-quoted heredoc delimiter", "apply_patch <<\"PATCH\"\n*** Begin Patch\n*** Delete File: d\n*** End Patch\nPATCH",
			[]patchOp{{kind: opDelete, path: "d", line: 2}}},
		{"bare heredoc delimiter", "  apply_patch <<EOF\n*** Begin Patch\n*** Delete File: d\n*** End Patch\nEOF\n",
			[]patchOp{{kind: opDelete, path: "d", line: 2}}},
		{"leading blank lines and spaces around markers", "\n\n  *** Begin Patch  \n*** Delete File:   d  \n *** End Patch\n",
			[]patchOp{{kind: opDelete, path: "d", line: 4}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := parsePatch(tt.text)
			if err != nil {
				t.Fatalf("parsePatch: %v", err)
			}
			if !reflect.DeepEqual(p.ops, tt.want) {
				t.Fatalf("ops\n got %+v\nwant %+v", p.ops, tt.want)
			}
			back, err := parsePatch(p.String())
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
		{"update without hunks", "*** Begin Patch\n*** Update File: a\n*** End Patch\n", `line 2: "*** Update File: a" has no hunks`},
		{"empty hunk", "*** Begin Patch\n*** Update File: a\n@@ f\n*** End Patch\n", "the hunk that starts at line 3 has no lines"},
		{"empty hunk at the end", "*** Begin Patch\n*** Update File: a\n-x\n@@", "line 4: the hunk has no lines"},
		{"end of file alone", "*** Begin Patch\n*** Update File: a\n*** End of File\n*** End Patch\n", "has no hunks"},
		{"heredoc not closed as a quote", "apply_patch <<'EOF\n*** Begin Patch\n", `expected "*** Begin Patch" as the first line`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := parsePatch(tt.text)
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
func samePatch(a, b *patch) bool {
	if len(a.ops) != len(b.ops) {
		return false
	}
	for i := range a.ops {
		x, y := a.ops[i], b.ops[i]
		if x.kind != y.kind || x.path != y.path || x.moveTo != y.moveTo || !slicesEqualNil(x.lines, y.lines) || len(x.hunks) != len(y.hunks) {
			return false
		}
		for j := range x.hunks {
			hx, hy := x.hunks[j], y.hunks[j]
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
