package watch

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The watcher benchmarks run on a generated tree of 100,000 one-byte files
// in 5,000 leaf directories (50 × 100, plus the 50 parents and the root):
//
//	go test -run '^$' -bench Watch -benchtime 200x ./workspace/watch/
const (
	benchTop   = 50  // top-level directories
	benchLeaf  = 100 // leaf directories in each
	benchFiles = 20  // files in each leaf
)

// benchTree generates the tree in a fresh temporary directory and opens it.
func benchTree(b *testing.B) (Dir, string) {
	b.Helper()
	r := genTree(b, benchTop, benchLeaf, benchFiles)
	b.Logf("tree: %d files in %d directories; fs.inotify.max_user_watches = %s",
		benchTop*benchLeaf*benchFiles, benchTop*benchLeaf+benchTop+1, procValue("max_user_watches"))
	return r, r.Path()
}

func benchWatcher(b *testing.B, r Dir, opts Options) *Watcher {
	b.Helper()
	opts.FenceDir = b.TempDir()
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	w, err := New(r, opts)
	if err != nil {
		b.Fatal(err)
	}
	if w.Mode() == "polling" {
		b.Logf("polling: %s", w.Problem())
	}
	return w
}

func reportMode(b *testing.B, w *Watcher) {
	inotify := 0.0
	if w.Mode() != "polling" {
		inotify = 1
	}
	b.ReportMetric(inotify, "inotify(1)/polling(0)")
}

// BenchmarkWatchStart measures New on the whole tree (walk, one
// watch per directory, snapshot) and the heap the running watcher holds.
func BenchmarkWatchStart(b *testing.B) {
	r, _ := benchTree(b)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	w := benchWatcher(b, r, Options{})
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := float64(int64(after.HeapInuse)-int64(before.HeapInuse)) / (1 << 20)
	runtime.KeepAlive(w)
	w.Close()
	for b.Loop() {
		w = benchWatcher(b, r, Options{})
		w.Close()
	}
	// Reported after the loop: b.Loop resets the metrics when it starts.
	reportMode(b, w)
	b.ReportMetric(heap, "heap-MiB")
}

// BenchmarkWatchLatency measures the time from a write to the change being
// in the journal: "sync" through Sync (what the daemon does before a
// delta), "debounce" by waiting on the journal with the default debounce (what
// a change left alone costs), "polling-sync" through Sync with inotify
// refused (each Sync is then a full scan). Each iteration is one write.
func BenchmarkWatchLatency(b *testing.B) {
	r, root := benchTree(b)
	for _, mode := range []string{"sync", "debounce", "polling-sync"} {
		b.Run(mode, func(b *testing.B) {
			var opts Options
			if mode == "polling-sync" {
				opts.newSource = func() (eventSource, error) { return nil, syscall.EMFILE }
			}
			w := benchWatcher(b, r, opts)
			defer w.Close()
			ctx := context.Background()
			var lat []time.Duration
			n := 0
			for b.Loop() {
				n++
				p := filepath.Join(root, fmt.Sprintf("d%03d", rand.IntN(benchTop)), fmt.Sprintf("s%03d", rand.IntN(benchLeaf)), fmt.Sprintf("f%02d.go", rand.IntN(benchFiles)))
				cur := w.Cursor()
				start := time.Now()
				if err := os.WriteFile(p, []byte(fmt.Sprint(n)), 0o644); err != nil {
					b.Fatal(err)
				}
				var err error
				if mode != "debounce" {
					err = w.Sync(ctx)
				} else {
					_, err = w.journal.wait(ctx, cur, w.done)
				}
				lat = append(lat, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				if cs, _, _ := w.Changes(cur); len(cs) == 0 {
					b.Fatalf("write %d not journaled", n)
				}
			}
			slices.Sort(lat)
			reportMode(b, w)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// BenchmarkWatchDelta measures Delta after 100 files changed, 50 of them in
// the read set (one line of forty changed in each): a Sync, the journal's
// collapse, 50 reads and diffs, the lists.
func BenchmarkWatchDelta(b *testing.B) {
	r, root := benchTree(b)
	var lines []string
	for i := range 40 {
		lines = append(lines, fmt.Sprintf("line %d of an ordinary source file", i))
	}
	before := strings.Join(lines, "\n") + "\n"
	after := strings.Replace(before, "line 20 of", "line twenty of", 1)
	seen := map[string]Seen{}
	var paths []string
	for i := range 100 {
		rel := fmt.Sprintf("d%03d/s%03d/f%02d.go", i%benchTop, i, i%benchFiles)
		paths = append(paths, rel)
		writeFile(b, filepath.Join(root, filepath.FromSlash(rel)), before)
		if i%2 == 0 {
			seen[rel] = Seen{Hash: seenHash([]byte(before)), Content: []byte(before)}
		}
	}
	w := benchWatcher(b, r, Options{})
	defer w.Close()
	cur := w.Cursor()
	for _, rel := range paths {
		writeFile(b, filepath.Join(root, filepath.FromSlash(rel)), after)
	}
	ctx := context.Background()
	var d Delta
	for b.Loop() {
		var err error
		if d, err = w.Delta(ctx, cur, seen, DeltaCaps{}); err != nil {
			b.Fatal(err)
		}
	}
	if len(d.Updated) == 0 || !strings.Contains(d.Text, "Modified: ") {
		b.Fatalf("unexpected delta:\n%s", d.Text)
	}
	reportMode(b, w)
	b.ReportMetric(float64(len(d.Text)), "text-bytes")
	b.ReportMetric(float64(len(d.Updated)), "diffs")
}
