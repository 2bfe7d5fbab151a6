package watch

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// A read-set file too large to diff is hashed as it streams: touched with
// the same content it is not reported, changed it is named; one that grows
// to a GiB is named without being read, and the delta allocates far less
// than the file.
func TestDeltaBigReadSetFiles(t *testing.T) {
	r, root, _ := newTree(t)
	big := strings.Repeat("a line of a file too large to diff\n", 3*deltaMaxFile/35)
	for _, name := range []string{"touched.txt", "changed.txt", "grown.txt"} {
		writeFile(t, filepath.Join(root, name), big)
	}
	w := watchRoot(t, r, Options{})
	cur := w.Cursor()
	known := Seen{Hash: seenHash([]byte(big))} // read_file keeps no content this large
	seen := map[string]Seen{"touched.txt": known, "changed.txt": known, "grown.txt": known}

	writeFile(t, filepath.Join(root, "touched.txt"), big)
	writeFile(t, filepath.Join(root, "changed.txt"), big+"one more\n")
	if err := os.Truncate(filepath.Join(root, "grown.txt"), 1<<30); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d := delta(t, w, cur, seen, DeltaCaps{})
	runtime.ReadMemStats(&after)

	want := "Files changed on disk since your last request:\nModified: changed.txt, grown.txt\n"
	if d.Text != want {
		t.Errorf("Text:\n%s\nwant:\n%s", d.Text, want)
	}
	if !slices.Equal(d.Forget, []string{"changed.txt", "grown.txt"}) || len(d.Updated) != 0 {
		t.Errorf("Forget %q Updated %v, want changed.txt and grown.txt forgotten", d.Forget, d.Updated)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("the delta allocated %d MiB", alloc>>20)
	}
}

// StaleFiles hashes a file too large to diff as it streams: unchanged, it
// is not stale. One past ReadWholeMax, which read_file does not hash, is.
func TestStaleFilesBig(t *testing.T) {
	r, root, _ := newTree(t)
	big := strings.Repeat("x", 2*deltaMaxFile)
	writeFile(t, filepath.Join(root, "same.txt"), big)
	writeFile(t, filepath.Join(root, "huge.txt"), "")
	if err := os.Truncate(filepath.Join(root, "huge.txt"), ReadWholeMax+1); err != nil {
		t.Fatal(err)
	}
	seen := map[string]Seen{"same.txt": {Hash: seenHash([]byte(big))}, "huge.txt": {Hash: "anything"}}
	if got := StaleFiles(r, seen); !slices.Equal(got, []string{"huge.txt"}) {
		t.Fatalf("stale = %v, want [huge.txt]", got)
	}
}

// The read set's texts are loaded (Seen.Load) only for files that changed:
// a session that read many files does not load them all for every delta.
// A diff longer than a whole delta is named, and not kept.
func TestDeltaLoadsOnlyChangedTexts(t *testing.T) {
	r, root, _ := newTree(t)
	var loaded []string
	seen := map[string]Seen{}
	for _, name := range []string{"a.txt", "b.txt", "c.txt", "long.txt"} {
		writeFile(t, filepath.Join(root, name), "before\n")
		seen[name] = Seen{Hash: seenHash([]byte("before\n")), Load: func() []byte {
			loaded = append(loaded, name)
			return []byte("before\n")
		}}
	}
	w := watchRoot(t, r, Options{})
	cur := w.Cursor()
	writeFile(t, filepath.Join(root, "b.txt"), "after\n")
	writeFile(t, filepath.Join(root, "long.txt"), strings.Repeat("a long line\n", 3000))
	d := delta(t, w, cur, seen, DeltaCaps{})
	if !slices.Equal(loaded, []string{"b.txt", "long.txt"}) {
		t.Errorf("loaded %q, want only the changed b.txt and long.txt", loaded)
	}
	want := "Files changed on disk since your last request:\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-before\n+after\n" +
		"Modified: long.txt\nUse read_file to see the current contents of files named without a diff.\n"
	if d.Text != want {
		t.Errorf("Text:\n%s\nwant:\n%s", d.Text, want)
	}
	if string(d.Updated["b.txt"].Content) != "after\n" || !slices.Equal(d.Forget, []string{"long.txt"}) {
		t.Errorf("Updated %v, Forget %q", d.Updated, d.Forget)
	}
}
