//go:build linux

package watch

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// The shared watcher's benchmarks: what many workspaces cost, what a big
// tree costs to open, what a tree past the limit watches.
//
//	go test -run '^$' -bench 'WatchHub500' -benchtime 1x ./workspace/watch/
//	go test -run '^$' -bench 'Watch(Open|Sync)11k|WatchPartial' -benchtime 10x ./workspace/watch/

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// BenchmarkWatchHub500 opens 500 small workspaces (a root, src/ and three
// files) through one Hub, as the daemon does, then measures what they
// cost idle for 10 s. (With an inotify instance each, past
// fs.inotify.max_user_instances they would poll; not measured here, since
// holding the user's every instance would break the other programs'
// watchers.)
func BenchmarkWatchHub500(b *testing.B) {
	const n = 500
	base := b.TempDir()
	roots := make([]Dir, n)
	for i := range n {
		dir := filepath.Join(base, fmt.Sprintf("w%03d", i))
		for _, f := range []string{"a.go", "b.go", "c.go"} {
			writeFile(b, filepath.Join(dir, "src", f), "package src\n")
		}
		r, err := openDir(dir)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		roots[i] = r
	}
	for b.Loop() {
		before := inotifyFDs(b)
		hub := NewHub(quietLogger())
		start := time.Now()
		ws := make([]*Watcher, n)
		polling := 0
		for i, r := range roots {
			w, err := New(r, Options{Hub: hub, Logger: quietLogger(), FenceDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			ws[i] = w
			if w.Mode() == "polling" {
				polling++
			}
		}
		open := time.Since(start)
		instances := inotifyFDs(b) - before
		cpu0 := cpuTime(b)
		time.Sleep(10 * time.Second) // idle: what the watchers cost on their own
		idle := cpuTime(b) - cpu0
		for _, w := range ws {
			w.Close()
		}
		hub.Close()
		b.ReportMetric(float64(instances), "inotify-instances")
		b.ReportMetric(float64(polling), "polling")
		b.ReportMetric(float64(open.Microseconds())/1000/n, "open-ms/workspace")
		b.ReportMetric(float64(idle.Microseconds())/1000, "idle-cpu-ms/10s")
	}
}

// BenchmarkWatchOpen11k measures opening the watcher of an 11,000-file
// tree (1,100 leaf directories of 10 files, 1,211 directories in all): the
// walk, a watch per directory, the snapshot; "hub" on the shared instance,
// "own" on an instance of its own.
func BenchmarkWatchOpen11k(b *testing.B) {
	r := genTree(b, 110, 10, 10)
	for _, mode := range []string{"hub", "own"} {
		b.Run(mode, func(b *testing.B) {
			var hub *Hub
			if mode == "hub" {
				hub = NewHub(quietLogger())
				defer hub.Close()
			}
			for b.Loop() {
				w, err := New(r, Options{Hub: hub, Logger: quietLogger(), FenceDir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				if w.Mode() != "inotify" {
					b.Fatalf("mode %s: %s", w.Mode(), w.Problem())
				}
				w.Close()
			}
		})
	}
}

// BenchmarkWatchSync11k measures what each prompt pays the watcher of the
// 11,000-file tree on the hub: a write, then the Sync before the delta.
func BenchmarkWatchSync11k(b *testing.B) {
	r := genTree(b, 110, 10, 10)
	hub := NewHub(quietLogger())
	defer hub.Close()
	w, err := New(r, Options{Hub: hub, Logger: quietLogger(), FenceDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	ctx := context.Background()
	var lat []time.Duration
	n := 0
	for b.Loop() {
		n++
		p := filepath.Join(r.Path(), fmt.Sprintf("d%03d", n%110), fmt.Sprintf("s%03d", n%10), "f00.go")
		start := time.Now()
		if err := os.WriteFile(p, []byte(fmt.Sprint(n)), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := w.Sync(ctx); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkWatchPartial measures a tree past the default limit (25,250
// directories: 250 × 100 leaves and their parents, one file each): opening
// it (the first walk stops at 20,000 and the root alone is watched), then
// what one session's three reads get watched.
func BenchmarkWatchPartial(b *testing.B) {
	r := genTree(b, 250, 100, 1)
	hub := NewHub(quietLogger())
	defer hub.Close()
	var watched, afterReads int
	for b.Loop() {
		w, err := New(r, Options{Hub: hub, Logger: quietLogger(), FenceDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		partial, n := w.Partial()
		if !partial {
			b.Fatal("the tree is watched whole")
		}
		watched = n
		w.Touch(time.Now(), "d007/s003/f00.go", "d007/s004/f00.go", "d120/s099/f00.go")
		syncWatcher(b, w)
		_, afterReads = w.Partial()
		w.Close()
	}
	b.ReportMetric(float64(watched), "dirs-watched-at-open")
	b.ReportMetric(float64(afterReads), "dirs-watched-after-3-reads")
}
