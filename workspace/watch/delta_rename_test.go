package watch

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestDeltaRenamedToBinaryNamesOldPath: a read-set file renamed and made
// binary is listed as renamed as well as modified, so the model hears that
// the path it read is gone (found by FuzzDelta: the Text only said
// "Modified: b.bin (binary)").
func TestDeltaRenamedToBinaryNamesOldPath(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "a.txt"), "text\n")
	w := watchRoot(t, r, Options{})
	cur := w.Cursor()
	seen := map[string]Seen{"a.txt": seenOf("text\n")}
	rename(t, filepath.Join(root, "a.txt"), filepath.Join(root, "b.bin"))
	writeFile(t, filepath.Join(root, "b.bin"), "\x00\x01binary")
	d := delta(t, w, cur, seen, DeltaCaps{})
	want := "Files changed on disk since your last request:\n" +
		"Modified: b.bin (binary)\n" +
		"Renamed: a.txt → b.bin\n"
	if d.Text != want {
		t.Errorf("Text:\n%s\nwant:\n%s", d.Text, want)
	}
	if len(d.Updated) != 0 || !slices.Equal(d.Forget, []string{"a.txt"}) {
		t.Errorf("Updated = %v, Forget = %q", d.Updated, d.Forget)
	}
}
