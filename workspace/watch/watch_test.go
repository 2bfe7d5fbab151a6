package watch

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestWatchCreateModifyDelete(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "old.txt"), "old\n")
	writeFile(t, filepath.Join(root, "keep.txt"), "keep\n")
	w := watchRoot(t, r, Options{})
	if w.Mode() != "inotify" || w.Problem() != "" {
		t.Fatalf("Mode %q Problem %q, want inotify and none", w.Mode(), w.Problem())
	}
	cur := w.Cursor()
	writeFile(t, filepath.Join(root, "new.txt"), "new\n")
	writeFile(t, filepath.Join(root, "keep.txt"), "kept, longer\n")
	remove(t, filepath.Join(root, "old.txt"))
	got, cur := changesSince(t, w, cur)
	wantChanges(t, got, `
modified keep.txt
created new.txt
deleted old.txt`)

	// Created then modified is created; created then deleted is nothing.
	writeFile(t, filepath.Join(root, "a.txt"), "1")
	writeFile(t, filepath.Join(root, "b.txt"), "1")
	syncWatcher(t, w)
	writeFile(t, filepath.Join(root, "a.txt"), "22")
	remove(t, filepath.Join(root, "b.txt"))
	got, _ = changesSince(t, w, cur)
	wantChanges(t, got, `created a.txt`)
}

func TestWatchNestedGitignore(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, ".gitignore"), "*.log\n/secret.txt\n")
	writeFile(t, filepath.Join(root, "sub", ".gitignore"), "# nested\n!keep.log\ntmp/\n")
	writeFile(t, filepath.Join(root, "sub", "deeper", ".gitignore"), "*.gen.go\n")
	w := watchRoot(t, r, Options{})
	cur := w.Cursor()
	for _, p := range []string{
		"a.log", "sub/x.log", "sub/deeper/y.log", // *.log from the root
		"secret.txt",                          // anchored to the root
		"sub/tmp/a.txt", "sub/tmp/more/b.txt", // a directory ignored by a nested rule
		"sub/deeper/z.gen.go",            // the deepest .gitignore
		"sub/.main.go.swp", "notes.txt~", // the default list
		".git/HEAD", ".git/objects/ab/cdef", // the repository
	} {
		writeFile(t, filepath.Join(root, filepath.FromSlash(p)), "ignored\n")
	}
	for _, p := range []string{"sub/keep.log", "sub/deeper/keep.log", "sub/secret.txt", "sub/deeper/z.go",
		"node_modules/pkg/index.js", "sub/dist/app.js", // no rule of the repository's names them
	} {
		writeFile(t, filepath.Join(root, filepath.FromSlash(p)), "reported\n")
	}
	got, cur := changesSince(t, w, cur)
	wantChanges(t, got, `
created node_modules/
created node_modules/pkg/
created node_modules/pkg/index.js
created sub/deeper/keep.log
created sub/deeper/z.go
created sub/dist/
created sub/dist/app.js
created sub/keep.log
created sub/secret.txt`)

	// A file inside an ignored directory stays ignored when modified, and
	// a new rule takes effect at once.
	writeFile(t, filepath.Join(root, "sub", "tmp", "a.txt"), "changed\n")
	writeFile(t, filepath.Join(root, "sub", "deeper", ".gitignore"), "*.gen.go\n*.txt\n")
	writeFile(t, filepath.Join(root, "sub", "deeper", "notes.txt"), "now ignored\n")
	got, _ = changesSince(t, w, cur)
	wantChanges(t, got, `modified sub/deeper/.gitignore`)
}

func TestWatchDirectoryCreatedThenFilled(t *testing.T) {
	w, root := startWatcher(t, Options{})
	cur := w.Cursor()
	// Everything below lands before the watcher can watch the new
	// directories: their listing must find it.
	var want []string
	want = append(want, "created fresh/", "created fresh/a/", "created fresh/a/b/")
	for i := range 20 {
		p := filepath.Join(root, "fresh", "a", "b", "c", "f"+string(rune('a'+i))+".txt")
		writeFile(t, p, "x")
	}
	writeFile(t, filepath.Join(root, "fresh", "top.txt"), "x")
	want = append(want, "created fresh/a/b/c/")
	for i := range 20 {
		want = append(want, "created fresh/a/b/c/f"+string(rune('a'+i))+".txt")
	}
	want = append(want, "created fresh/top.txt")
	got, cur := changesSince(t, w, cur)
	wantChanges(t, got, strings.Join(want, "\n"))

	// And the new directories are watched: later writes in them are seen.
	writeFile(t, filepath.Join(root, "fresh", "a", "b", "c", "late.txt"), "late")
	got, _ = changesSince(t, w, cur)
	wantChanges(t, got, `created fresh/a/b/c/late.txt`)
}

func TestWatchRename(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "old.txt"), "content\n")
	writeFile(t, filepath.Join(root, "dir", "inner", "f.txt"), "f\n")
	w := watchRoot(t, r, Options{})
	cur := w.Cursor()

	rename(t, filepath.Join(root, "old.txt"), filepath.Join(root, "new.txt"))
	got, cur := changesSince(t, w, cur)
	wantChanges(t, got, `renamed old.txt → new.txt`)

	rename(t, filepath.Join(root, "dir"), filepath.Join(root, "moved"))
	got, cur = changesSince(t, w, cur)
	wantChanges(t, got, `
renamed dir → moved/
renamed dir/inner → moved/inner/
renamed dir/inner/f.txt → moved/inner/f.txt`)

	// The moved directories are watched under their new names.
	writeFile(t, filepath.Join(root, "moved", "inner", "f.txt"), "changed\n")
	writeFile(t, filepath.Join(root, "moved", "inner", "g.txt"), "g\n")
	got, _ = changesSince(t, w, cur)
	wantChanges(t, got, `
modified moved/inner/f.txt
created moved/inner/g.txt`)
}

func TestWatchAtomicSave(t *testing.T) {
	r, root, _ := newTree(t)
	target := filepath.Join(root, "main.go")
	writeFile(t, target, "package main\n")
	w := watchRoot(t, r, Options{})
	cur := w.Cursor()
	// What editors and hearth's own write_file do: write a temporary file
	// next to the target, then rename it over the target.
	tmp := filepath.Join(root, ".main.go.swp-tmp")
	writeFile(t, tmp, "package main\n\nfunc main() {}\n")
	rename(t, tmp, target)
	got, cur := changesSince(t, w, cur)
	wantChanges(t, got, `modified main.go`)

	// Even when the journal is read between the two steps, the run since
	// the cursor collapses to the same.
	writeFile(t, tmp, "package main // 2\n")
	syncWatcher(t, w)
	rename(t, tmp, target)
	got, _ = changesSince(t, w, cur)
	wantChanges(t, got, `modified main.go`)
}

func TestWatchDeleteDirectory(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "gone", "a.txt"), "a")
	writeFile(t, filepath.Join(root, "gone", "sub", "b.txt"), "b")
	writeFile(t, filepath.Join(root, "stays.txt"), "s")
	w := watchRoot(t, r, Options{})
	cur := w.Cursor()
	remove(t, filepath.Join(root, "gone"))
	got, cur := changesSince(t, w, cur)
	wantChanges(t, got, `
deleted gone/
deleted gone/a.txt
deleted gone/sub/
deleted gone/sub/b.txt`)

	// Recreated under the same name, it is watched afresh.
	writeFile(t, filepath.Join(root, "gone", "again.txt"), "again")
	got, cur = changesSince(t, w, cur)
	wantChanges(t, got, `
created gone/
created gone/again.txt`)
	writeFile(t, filepath.Join(root, "gone", "again.txt"), "again and again")
	got, _ = changesSince(t, w, cur)
	wantChanges(t, got, `modified gone/again.txt`)
}

func TestWatchSelfWriteNotEchoed(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "a.go"), "package a\n")
	w := watchRoot(t, r, Options{})
	cur := w.Cursor()

	mine := []byte("package a\n\n// written by hearth\n")
	w.NoteSelfWrite("a.go", mine)
	w.NoteSelfWrite(filepath.Join(root, "made.go"), []byte("package a\n")) // absolute works too
	w.NoteSelfWrite("newpkg/sub/b.go", []byte("package b\n"))              // in directories made for it
	writeFile(t, filepath.Join(root, "a.go"), string(mine))
	writeFile(t, filepath.Join(root, "made.go"), "package a\n")
	writeFile(t, filepath.Join(root, "newpkg", "sub", "b.go"), "package b\n")
	writeFile(t, filepath.Join(root, "user.go"), "package a\n")
	writeFile(t, filepath.Join(root, "shared", "b.go"), "package b\n")
	writeFile(t, filepath.Join(root, "shared", "user.go"), "package b\n")
	w.NoteSelfWrite("shared/b.go", []byte("package b\n")) // (noted late, but before the Sync)
	got, cur := changesSince(t, w, cur)
	wantChanges(t, got, `
created shared/
created shared/user.go
created user.go`)

	// The user then edits the file hearth wrote: that is news.
	writeFile(t, filepath.Join(root, "a.go"), "package a\n\n// the user's turn\n")
	got, cur = changesSince(t, w, cur)
	wantChanges(t, got, `modified a.go`)

	// And the note is spent: writing hearth's content back is news too.
	writeFile(t, filepath.Join(root, "a.go"), string(mine))
	got, _ = changesSince(t, w, cur)
	wantChanges(t, got, `modified a.go`)
}

// A file hearth wrote that then grows to a GiB is news, told by its size:
// the watcher does not read it to compare hashes.
func TestWatchSelfWriteGrownHuge(t *testing.T) {
	r, root, _ := newTree(t)
	w := watchRoot(t, r, Options{})
	cur := w.Cursor()
	mine := []byte("written by hearth\n")
	w.NoteSelfWrite("big.txt", mine)
	writeFile(t, filepath.Join(root, "big.txt"), string(mine))
	got, cur := changesSince(t, w, cur)
	wantChanges(t, got, ``)
	if err := os.Truncate(filepath.Join(root, "big.txt"), 1<<30); err != nil {
		t.Fatal(err)
	}
	got, _ = changesSince(t, w, cur)
	wantChanges(t, got, `modified big.txt`)
	if _, err := fileSum(r, "big.txt", int64(len(mine))); err != errSizeDiffers {
		t.Errorf("fileSum of a file of another size: %v, want errSizeDiffers", err)
	}
}

func TestWatchDebounceFlushesOnItsOwn(t *testing.T) {
	w, root := startWatcher(t, Options{Quiet: 20 * time.Millisecond, MaxWait: 200 * time.Millisecond})
	cur := w.Cursor()
	writeFile(t, filepath.Join(root, "a.txt"), "a")
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	next, err := w.journal.wait(ctx, cur, w.done)
	if err != nil {
		t.Fatal(err)
	}
	cs, _, _ := w.Changes(cur)
	if next <= cur || formatChanges(cs) != "created a.txt" {
		t.Errorf("after the wait: next %d (cursor %d), changes %q", next, cur, formatChanges(cs))
	}
}

func TestWatchCloseStopsAndWaits(t *testing.T) {
	before := runtime.NumGoroutine()
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "d", "f.txt"), "f")
	w, err := New(r, Options{FenceDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "d", "g.txt"), "g")
	syncWatcher(t, w)
	fenceDir := w.fenceDir

	closed := make(chan struct{})
	go func() { w.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(testTimeout):
		t.Fatal("Close did not return")
	}
	if err := w.Close(); err != nil { // again: a no-op
		t.Fatal(err)
	}
	if err := w.Sync(context.Background()); err != ErrClosed {
		t.Errorf("Sync after Close: %v, want ErrClosed", err)
	}
	if _, err := os.Stat(fenceDir); !os.IsNotExist(err) {
		t.Errorf("marker directory %s left behind: %v", fenceDir, err)
	}
	// The goroutine that called Close may still be on its way out; give it
	// (not the watcher) a bounded number of chances to finish.
	deadline := time.Now().Add(testTimeout)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after Close, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}
