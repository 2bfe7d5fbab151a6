package daemon

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// An edit of a large file is shown to the editor as the changed region with
// a little context, not as the file twice: a permission request or a
// tool_call_update must stay far below the frame limit of an editor's
// reader (rpc.DefaultMaxMessage, 8 MiB: hearth ask drops a larger one).
func TestDiffOfALargeFileIsBounded(t *testing.T) {
	line := strings.Repeat("x", 99) + "\n"
	old := strings.Repeat(line, 60000) // ~6 MiB
	i := len(old) / 2
	i -= i % len(line)
	new := old[:i] + "changed line\n" + old[i+len(line):]

	b, err := json.Marshal(diffBlock("/w", "big.txt", old, new))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > maxDiffBytes*11/10 { // JSON escapes each newline
		t.Fatalf("the diff block is %d bytes for a one-line change of a 6 MiB file", len(b))
	}
	var d struct {
		OldText *string `json:"oldText"`
		NewText string  `json:"newText"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if d.OldText == nil || !strings.Contains(d.NewText, "changed line") || strings.Contains(*d.OldText, "changed line") {
		t.Fatalf("the bounded diff lost the change: old %d bytes, new %q…", len(*d.OldText), d.NewText[:min(len(d.NewText), 200)])
	}
	if !strings.Contains(d.NewText, line) || !strings.Contains(*d.OldText, line) {
		t.Fatal("no context around the change")
	}

	// Changes all over the file: each side is cut, and says so.
	spread := strings.ReplaceAll(old, "x\n", "y\n")
	b, _ = json.Marshal(diffBlock("/w", "big.txt", old, spread))
	if len(b) > maxDiffBytes*11/10 { // JSON escapes each newline
		t.Fatalf("the diff block is %d bytes for a change of every line", len(b))
	}
	if !strings.Contains(string(b), "not shown") {
		t.Fatalf("a cut diff does not say so: %s…", b[len(b)-300:])
	}

	// A small edit is shown whole, as before.
	small, _ := json.Marshal(diffBlock("/w", "a.txt", "one\ntwo\n", "one\n2\n"))
	if !strings.Contains(string(small), `"oldText":"one\ntwo\n"`) || !strings.Contains(string(small), `"newText":"one\n2\n"`) {
		t.Fatalf("a small diff changed: %s", small)
	}
}

// changedRegion keeps everything that differs: what it leaves out on each
// side is common to old and new, and it starts and ends at line ends.
func TestChangedRegionKeepsEveryChange(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	lines := []string{"a\n", "b\n", "c\n", "dd\n", "\n", "e"}
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(lines[r.IntN(len(lines)-1)])
		}
		return b.String()
	}
	for range 2000 {
		old := text(r.IntN(30))
		new := old
		for range 1 + r.IntN(3) { // splice a few random lines in or out
			i := r.IntN(len(new) + 1)
			j := min(len(new), i+r.IntN(6))
			new = new[:i] + text(r.IntN(3)) + new[j:]
		}
		if r.IntN(4) == 0 {
			new += lines[len(lines)-1] // no final newline
		}
		start, oldEnd, newEnd := changedRegion(old, new)
		if old[:start] != new[:start] || old[oldEnd:] != new[newEnd:] {
			t.Fatalf("changedRegion(%q, %q) = %d, %d, %d leaves a difference out", old, new, start, oldEnd, newEnd)
		}
		if start > 0 && old[start-1] != '\n' {
			t.Fatalf("changedRegion(%q, %q) starts mid-line at %d", old, new, start)
		}
		if oldEnd < len(old) && old[oldEnd-1] != '\n' {
			t.Fatalf("changedRegion(%q, %q) ends mid-line at %d", old, new, oldEnd)
		}
	}
}
