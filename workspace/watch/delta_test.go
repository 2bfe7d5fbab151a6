package watch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func seenHash(b []byte) string { sum := sha256.Sum256(b); return hex.EncodeToString(sum[:]) }

func seenOf(content string) Seen {
	return Seen{Hash: seenHash([]byte(content)), Content: []byte(content)}
}

func delta(t *testing.T, w *Watcher, since uint64, seen map[string]Seen, caps DeltaCaps) Delta {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	d, err := w.Delta(ctx, since, seen, caps)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDeltaDiffsReadSetFiles(t *testing.T) {
	r, root, _ := newTree(t)
	const before = "package a\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() {}\n"
	const after = "package a\n\nfunc A() int {\n\treturn 2\n}\n\nfunc B() {}\n"
	writeFile(t, filepath.Join(root, "a.go"), before)
	writeFile(t, filepath.Join(root, "same.go"), "package a\n")
	writeFile(t, filepath.Join(root, "other.go"), "package a\n")
	writeFile(t, filepath.Join(root, "gone.go"), "package a\n")
	writeFile(t, filepath.Join(root, "olddir", "x.go"), "package x\n")
	w := watchRoot(t, r, Options{})
	cur := w.Cursor()
	seen := map[string]Seen{"a.go": seenOf(before), "same.go": seenOf("package a\n"), "gone.go": seenOf("package a\n")}

	writeFile(t, filepath.Join(root, "a.go"), after)
	writeFile(t, filepath.Join(root, "same.go"), "package a\n") // touched, same content
	writeFile(t, filepath.Join(root, "other.go"), "package a // changed\n")
	writeFile(t, filepath.Join(root, "new", "n.go"), "package n\n")
	remove(t, filepath.Join(root, "gone.go"))
	rename(t, filepath.Join(root, "olddir"), filepath.Join(root, "newdir"))
	d := delta(t, w, cur, seen, DeltaCaps{})

	want := "Files changed on disk since your last request:\n" +
		"--- a/a.go\n" +
		"+++ b/a.go\n" +
		"@@ -1,7 +1,7 @@\n" +
		" package a\n" +
		" \n" +
		" func A() int {\n" +
		"-\treturn 1\n" +
		"+\treturn 2\n" +
		" }\n" +
		" \n" +
		" func B() {}\n" +
		"Created: new/n.go\n" +
		"Modified: other.go\n" +
		"Renamed: olddir → newdir/\n" +
		"Deleted: gone.go\n"
	if d.Text != want {
		t.Errorf("Text:\n%s\nwant:\n%s", d.Text, want)
	}
	if got := d.Updated["a.go"]; string(got.Content) != after || got.Hash != seenHash([]byte(after)) || len(d.Updated) != 1 {
		t.Errorf("Updated = %v, want only a.go with its new content", d.Updated)
	}
	if !slices.Equal(d.Forget, []string{"gone.go"}) {
		t.Errorf("Forget = %q, want [gone.go]", d.Forget)
	}
	if d.Next != w.Cursor() || d.Overflow {
		t.Errorf("Next %d Overflow %v, want %d false", d.Next, d.Overflow, w.Cursor())
	}

	// Nothing since: no text.
	if d2 := delta(t, w, d.Next, seen, DeltaCaps{}); d2.Text != "" || d2.Next != d.Next {
		t.Errorf("second delta: %q next %d, want empty at %d", d2.Text, d2.Next, d.Next)
	}
}

func TestDeltaRenamedReadSetFile(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "a.txt"), "one\ntwo\n")
	writeFile(t, filepath.Join(root, "b.txt"), "same\n")
	w := watchRoot(t, r, Options{})
	cur := w.Cursor()
	seen := map[string]Seen{"a.txt": seenOf("one\ntwo\n"), "b.txt": seenOf("same\n")}
	rename(t, filepath.Join(root, "a.txt"), filepath.Join(root, "c.txt"))
	writeFile(t, filepath.Join(root, "c.txt"), "one\n2\n")
	rename(t, filepath.Join(root, "b.txt"), filepath.Join(root, "d.txt"))
	d := delta(t, w, cur, seen, DeltaCaps{})
	want := "Files changed on disk since your last request:\n" +
		"--- a/a.txt\n+++ b/c.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n" +
		"Renamed: a.txt → c.txt, b.txt → d.txt\n"
	if d.Text != want {
		t.Errorf("Text:\n%s\nwant:\n%s", d.Text, want)
	}
	if string(d.Updated["c.txt"].Content) != "one\n2\n" || string(d.Updated["d.txt"].Content) != "same\n" {
		t.Errorf("Updated = %v", d.Updated)
	}
	if !slices.Equal(d.Forget, []string{"a.txt", "b.txt"}) {
		t.Errorf("Forget = %q", d.Forget)
	}
}

func TestDeltaCaps(t *testing.T) {
	w, root := startWatcher(t, Options{})
	cur := w.Cursor()
	for i := range 12 {
		writeFile(t, filepath.Join(root, fmt.Sprintf("f%02d.txt", i)), "x")
	}
	d := delta(t, w, cur, nil, DeltaCaps{MaxEntries: 5})
	want := "Files changed on disk since your last request:\n" +
		"Created: f00.txt, f01.txt, f02.txt, f03.txt, f04.txt\n" +
		"... and 7 more. Use read_file or list_dir to see current contents.\n"
	if d.Text != want {
		t.Errorf("entries cap:\n%s\nwant:\n%s", d.Text, want)
	}

	// A diff over the byte cap is named, not shown, and its file forgotten
	// (the model has not seen the new content).
	big := strings.Repeat("a line of text\n", 400)
	writeFile(t, filepath.Join(root, "big.txt"), big)
	syncWatcher(t, w)
	cur = w.Cursor()
	writeFile(t, filepath.Join(root, "big.txt"), strings.ReplaceAll(big, "text", "TEXT"))
	d = delta(t, w, cur, map[string]Seen{"big.txt": seenOf(big)}, DeltaCaps{MaxBytes: 2048})
	want = "Files changed on disk since your last request:\n" +
		"Modified: big.txt\n" +
		"Use read_file to see the current contents of files named without a diff.\n"
	if d.Text != want || len(d.Updated) != 0 || !slices.Equal(d.Forget, []string{"big.txt"}) {
		t.Errorf("bytes cap: Text:\n%s\nUpdated %v Forget %q", d.Text, d.Updated, d.Forget)
	}
	if len(d.Text) > 2048 {
		t.Errorf("Text is %d bytes, over the cap", len(d.Text))
	}
}

func TestDeltaBinaryNamedNotInlined(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "data.bin"), "text for now\n")
	w := watchRoot(t, r, Options{})
	cur := w.Cursor()
	binary := "\x00\x01\x02ELF\x00secret-ish bytes\xff\xfe"
	writeFile(t, filepath.Join(root, "data.bin"), binary)
	writeFile(t, filepath.Join(root, "new.bin"), binary)
	d := delta(t, w, cur, map[string]Seen{"data.bin": seenOf("text for now\n")}, DeltaCaps{})
	want := "Files changed on disk since your last request:\n" +
		"Created: new.bin\n" +
		"Modified: data.bin (binary)\n"
	if d.Text != want {
		t.Errorf("Text:\n%s\nwant:\n%s", d.Text, want)
	}
	if strings.Contains(d.Text, "ELF") || len(d.Updated) != 0 || !slices.Equal(d.Forget, []string{"data.bin"}) {
		t.Errorf("binary content leaked or kept: Updated %v Forget %q", d.Updated, d.Forget)
	}
}

func TestDeltaOverflowChecksReadSet(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "a.txt"), "a\n")
	w := watchRoot(t, r, Options{JournalSize: 4})
	cur := w.Cursor()
	writeFile(t, filepath.Join(root, "a.txt"), "A\n")
	syncWatcher(t, w)
	for i := range 10 {
		writeFile(t, filepath.Join(root, fmt.Sprintf("n%d.txt", i)), "n")
	}
	d := delta(t, w, cur, map[string]Seen{"a.txt": seenOf("a\n")}, DeltaCaps{})
	if !d.Overflow || !strings.Contains(d.Text, "any file may have changed") {
		t.Fatalf("want an overflow delta, got Overflow %v Text:\n%s", d.Overflow, d.Text)
	}
	if !strings.Contains(d.Text, "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n") {
		t.Errorf("the read-set file's diff is missing:\n%s", d.Text)
	}
}

func TestDeltaListsFold(t *testing.T) {
	dir := func(op ChangeOp, p, old string) Change { return Change{Op: op, Path: p, Old: old, Dir: true} }
	file := func(op ChangeOp, p, old string) Change { return Change{Op: op, Path: p, Old: old} }
	// "d-x" sorts between "d" and "d/a": folding must not depend on order.
	created := []Change{dir(Created, "d", ""), file(Created, "d-x", ""), file(Created, "d/a", ""), dir(Created, "e", "")}
	if got := strings.Join(createdNames(created), ", "); got != "d-x, d/a, e/" {
		t.Errorf("created: %s", got)
	}
	deleted := []Change{dir(Deleted, "d", ""), file(Deleted, "d-x", ""), file(Deleted, "d/a", ""), dir(Deleted, "d/s", ""), file(Deleted, "d/s/b", "")}
	if got := strings.Join(foldedNames(deleted), ", "); got != "d-x, d/" {
		t.Errorf("deleted: %s", got)
	}
	renamed := []Change{dir(Renamed, "n", "o"), file(Renamed, "n-x", "o-x"), file(Renamed, "n/a", "o/a"), file(Renamed, "n/b", "elsewhere/b")}
	if got := strings.Join(renamedNames(renamed), ", "); got != "o → n/, o-x → n-x, elsewhere/b → n/b" {
		t.Errorf("renamed: %s", got)
	}
}

// A file the model deleted itself (apply_patch: a tombstone in its read
// set, GoneHash) is not news: its deletion is quiet, the tombstone
// forgotten. Created again by someone else, it is named as created; a
// restart's stale check and an overflow's full check agree.
func TestDeltaQuietForWhatTheModelDeleted(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "mine.txt"), "x\n")
	writeFile(t, filepath.Join(root, "back.txt"), "y\n")
	writeFile(t, filepath.Join(root, "theirs.txt"), "z\n")
	writeFile(t, filepath.Join(root, "moved.txt"), "m\n")
	w := watchRoot(t, r, Options{})
	cur := w.Cursor()
	gone := Seen{Hash: GoneHash}
	// The model moved moved.txt to dest.txt: the old path gone, the new one
	// known with the content it has.
	seen := map[string]Seen{"mine.txt": gone, "back.txt": gone, "moved.txt": gone, "dest.txt": seenOf("m\n")}
	rename(t, filepath.Join(root, "moved.txt"), filepath.Join(root, "dest.txt"))
	remove(t, filepath.Join(root, "mine.txt"))
	remove(t, filepath.Join(root, "back.txt"))
	remove(t, filepath.Join(root, "theirs.txt"))
	writeFile(t, filepath.Join(root, "back.txt"), "y again\n")
	d := delta(t, w, cur, seen, DeltaCaps{})
	want := "Files changed on disk since your last request:\n" +
		"Created: back.txt\n" +
		"Deleted: theirs.txt\n"
	if d.Text != want {
		t.Errorf("Text:\n%s\nwant:\n%s", d.Text, want)
	}
	if !slices.Equal(d.Forget, []string{"back.txt", "mine.txt", "moved.txt"}) || len(d.Updated) != 0 {
		t.Errorf("Forget %q, Updated %v: want both tombstones forgotten, nothing updated", d.Forget, d.Updated)
	}
	if stale := StaleFiles(r, seen); !slices.Equal(stale, []string{"back.txt"}) {
		// dest.txt holds what the model knows; moved.txt and mine.txt are gone
		t.Errorf("StaleFiles = %q, want [back.txt]: a tombstone whose file is absent is not stale", stale)
	}
	over := buildDelta(r, nil, true, seen, DeltaCaps{})
	if !strings.Contains(over.Text, "Created: back.txt") || strings.Contains(over.Text, "mine.txt") {
		t.Errorf("overflow delta:\n%s", over.Text)
	}
}
