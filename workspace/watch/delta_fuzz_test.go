package watch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The flags argument of FuzzDelta.
const (
	deltaFuzzOverflow = 1 << iota // the journal lost track
	deltaFuzzNotKept              // the read set kept the hash, not the content
	deltaFuzzRenamed              // the file was renamed to path from deltaFuzzFrom
)

// deltaFuzzFrom is the old name of a file FuzzDelta renames.
const deltaFuzzFrom = "renamed-from.txt"

// FuzzDelta builds the Delta of one read-set file the model saw as old and
// that now holds new at path (modified, or renamed there), for arbitrary
// contents, paths, byte caps and overflow. It checks that the Text stays
// within MaxBytes (or, for a cap smaller than its fixed lines, adds nothing
// past them); that it is empty exactly when nothing the model should hear
// about changed (except that a binary file is named even when unchanged); that it names the path, and a renamed file's old path,
// whenever the cap leaves room for the names; that a changed file ends up
// either updated in the read set with its new content and a diff shown, or
// forgotten, never both, and a renamed file's old path is forgotten; and that a text diff
// shown, applied to old, gives new, and is shown whenever it fits well
// under the cap.
//
//	go test ./workspace/watch -run '^$' -fuzz FuzzDelta -fuzztime 1m
//
// Seeds: below, and testdata/fuzz/FuzzDelta.
func FuzzDelta(f *testing.F) {
	f.Add("a.go", []byte("package a\n\nfunc A() int {\n\treturn 1\n}\n"), []byte("package a\n\nfunc A() int {\n\treturn 2\n}\n"), uint16(0), uint8(0))
	f.Add("notes.md", []byte("no newline"), []byte("no newline\nnow two"), uint16(0), uint8(deltaFuzzRenamed))
	f.Add("big.txt", []byte(strings.Repeat("line\n", 300)), []byte(strings.Repeat("LINE\n", 300)), uint16(512), uint8(0))
	f.Add("same.txt", []byte("x\n"), []byte("x\n"), uint16(0), uint8(deltaFuzzOverflow))
	// One workspace for all cases: each writes its file and removes it.
	r, err := openDir(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { r.Close() })
	f.Fuzz(func(t *testing.T, rel string, old, now []byte, maxBytes uint16, flags uint8) {
		if !fs.ValidPath(rel) || rel == "." || rel == deltaFuzzFrom || strings.HasPrefix(rel, deltaFuzzFrom+"/") {
			return
		}
		first, _, _ := strings.Cut(rel, "/")
		defer os.RemoveAll(filepath.Join(r.Path(), first))
		p := filepath.Join(r.Path(), filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return // a name the file system refuses
		}
		if err := os.WriteFile(p, now, 0o644); err != nil {
			return
		}

		from, change := rel, Change{Seq: 1, Op: Modified, Path: rel}
		if flags&deltaFuzzRenamed != 0 {
			from, change = deltaFuzzFrom, Change{Seq: 1, Op: Renamed, Path: rel, Old: deltaFuzzFrom}
		}
		seen := Seen{Hash: seenHash(old), Content: old}
		if flags&deltaFuzzNotKept != 0 {
			seen.Content = nil
		}
		overflow := flags&deltaFuzzOverflow != 0
		d := buildDelta(r, []Change{change}, overflow, map[string]Seen{from: seen}, DeltaCaps{MaxBytes: int(maxBytes)})

		capBytes := int(maxBytes)
		if capBytes == 0 {
			capBytes = 16 << 10
		}
		header := "Files changed on disk since your last request:\n"
		if overflow {
			header += "More changed than hearth keeps track of: any file may have changed. Read files again before relying on earlier contents.\n"
		}
		if limit := max(capBytes, len(header)+120); len(d.Text) > limit {
			t.Fatalf("Text of %d bytes over the cap of %d (limit %d):\n%s", len(d.Text), capBytes, limit, d.Text)
		}

		changed := seenHash(old) != seenHash(now) || from != rel
		binaryNow := IsBinary(now[:min(len(now), SniffLen)], len(now) <= SniffLen)
		// A binary file is named as modified (binary) even when unchanged.
		if (d.Text == "") != (!changed && !overflow) && !(d.Text != "" && binaryNow) {
			t.Fatalf("changed %v, overflow %v, but Text %q", changed, overflow, d.Text)
		}
		if d.Text == "" {
			return
		}
		if !strings.HasPrefix(d.Text, header) {
			t.Fatalf("Text does not start with %q:\n%s", header, d.Text)
		}
		if changed && len(header)+len(from)+len(rel)+200 <= capBytes {
			for _, name := range []string{rel, from} {
				if !strings.Contains(d.Text, name) {
					t.Fatalf("Text does not name %q:\n%s", name, d.Text)
				}
			}
		}

		updated, isUpdated := d.Updated[rel]
		forgotten := slices.Contains(d.Forget, rel)
		switch {
		case isUpdated && forgotten:
			t.Fatalf("%q both updated and forgotten", rel)
		case from != rel && !slices.Contains(d.Forget, from):
			t.Fatalf("renamed away from %q, which is not forgotten: %q", from, d.Forget)
		case from == rel && !isUpdated && !forgotten && seenHash(old) != seenHash(now):
			t.Fatalf("%q changed, but is neither updated nor forgotten", rel)
		}
		keptAsIs := updated.Content == nil && seen.Content == nil // renamed unchanged, content not kept
		if isUpdated && (updated.Hash != seenHash(now) || string(updated.Content) != string(now) && !keptAsIs) {
			t.Fatalf("read set updated to %q (hash %s), the file holds %q", updated.Content, updated.Hash, now)
		}
		diffHeader := "--- a/" + from + "\n+++ b/" + rel + "\n"
		at := strings.Index(d.Text, diffHeader)
		if !isUpdated || seenHash(old) == seenHash(now) {
			if at >= 0 {
				t.Fatalf("a diff is shown for %q, which is not updated with it:\n%s", rel, d.Text)
			}
		} else {
			if at < 0 {
				t.Fatalf("%q updated, but no diff of it is shown:\n%s", rel, d.Text)
			}
			got, err := applyUnified(d.Text[at+len(diffHeader):], string(old))
			if err != nil {
				t.Fatalf("diff does not apply to the old content %q: %v\n%s", old, err, d.Text)
			}
			if got != string(now) {
				t.Fatalf("diff applied to %q gives %q, want %q\n%s", old, got, now, d.Text)
			}
		}

		text := seen.Content != nil && !IsBinary(old, true) && !binaryNow
		if text && seenHash(old) != seenHash(now) {
			diff := deltaDiff(from, rel, old, now)
			if fits := len(header) + len(diff) + 2*len(from) + 2*len(rel) + 400; fits <= capBytes*3/4 && !isUpdated {
				t.Fatalf("a diff of %d bytes fits the cap of %d but is not shown:\n%s", len(diff), capBytes, d.Text)
			}
		}
	})
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@\n$`)

// applyUnified applies the hunks at the start of diff (the part after its
// ---/+++ lines; it ends at the first line that is not part of a hunk) to
// old, checking every context and removed line, the old-side line numbers
// and the counts.
func applyUnified(diff, old string) (string, error) {
	lines := strings.SplitAfter(diff, "\n")
	src := strings.SplitAfter(old, "\n")
	if src[len(src)-1] == "" {
		src = src[:len(src)-1]
	}
	var out []string
	cur, i := 0, 0
	for ; i < len(lines) && strings.HasPrefix(lines[i], "@@ "); i++ {
		m := hunkHeader.FindStringSubmatch(lines[i])
		if m == nil {
			return "", fmt.Errorf("bad hunk header %q", lines[i])
		}
		num := func(s string) int {
			if s == "" {
				return 1
			}
			n, _ := strconv.Atoi(s)
			return n
		}
		oldStart, oldCount, newCount := num(m[1]), num(m[2]), num(m[4])
		start := oldStart - 1
		if oldCount == 0 {
			start = oldStart
		}
		if start < cur || start > len(src) {
			return "", fmt.Errorf("hunk %q starts at old line %d, after line %d", lines[i], oldStart, cur)
		}
		out = append(out, src[cur:start]...)
		cur = start
		// The new-side start line (m[3]) is not checked: go-udiff v0.4.1,
		// like the x/tools diff it forks (golang/go#81453), leaves it short
		// in every hunk after one that joined two edits across unchanged
		// lines (seed joined_hunk_new_start).
		for oldCount > 0 || newCount > 0 {
			i++
			if i >= len(lines) || lines[i] == "" {
				return "", errors.New("hunk ends early")
			}
			l := lines[i]
			content := l[1:]
			if i+1 < len(lines) && lines[i+1] == "\\ No newline at end of file\n" {
				content = strings.TrimSuffix(content, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if cur >= len(src) || src[cur] != content {
					return "", fmt.Errorf("line %q does not match old line %d", l, cur+1)
				}
				cur++
				oldCount--
				if l[0] == ' ' {
					out = append(out, content)
					newCount--
				}
			case '+':
				out = append(out, content)
				newCount--
			default:
				return "", fmt.Errorf("bad hunk line %q", l)
			}
			if oldCount < 0 || newCount < 0 {
				return "", fmt.Errorf("hunk longer than its header says")
			}
		}
	}
	out = append(out, src[cur:]...)
	return strings.Join(out, ""), nil
}
