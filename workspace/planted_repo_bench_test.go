//go:build linux

package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hearthd/hearth/workspace/sandbox"
	"github.com/hearthd/hearth/workspace/watch"
)

// BenchmarkPlantedRepoScan measures what hearth adds to every shell
// command to find planted repositories, on a tree of 5,100 directories
// (100 × 50, two files each) holding three nested repositories of 14
// sample hooks each, like `git init` leaves: "idle" is a command that
// changed nothing, "edit" one that created a file in a leaf directory,
// "first" the walk before a Toolset's first command. ns/dir is the cost
// per directory, to compare with the cost of one Lstat on the machine.
func BenchmarkPlantedRepoScan(b *testing.B) {
	r := genTree(b, 100, 50, 2)
	root := r.Path()
	for i := range 3 {
		hooks := filepath.Join(root, fmt.Sprintf("d%03d", i), "s000", "nested", ".git", "hooks")
		if err := os.MkdirAll(hooks, 0o755); err != nil {
			b.Fatal(err)
		}
		os.WriteFile(filepath.Join(hooks, "..", "config"), []byte("[core]\n\tbare = false\n"), 0o644)
		for h := range 14 {
			os.WriteFile(filepath.Join(hooks, fmt.Sprintf("hook%d.sample", h)), []byte("#!/bin/sh\n"), 0o755)
		}
	}
	const dirs = 1 + 100 + 100*50 + 3
	perDir := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/dirs, "ns/dir")
	}
	b.Run("first", func(b *testing.B) {
		defer perDir(b)
		for b.Loop() {
			g := sandbox.NewPlantGuard()
			g.Begin(root)(false)
		}
	})
	g := sandbox.NewPlantGuard()
	g.Begin(root)(false)
	b.Run("idle", func(b *testing.B) {
		defer perDir(b)
		for b.Loop() {
			if notes := g.Begin(root)(false); len(notes) != 0 {
				b.Fatal(notes)
			}
		}
	})
	b.Run("edit", func(b *testing.B) {
		defer perDir(b)
		n := 0
		for b.Loop() {
			end := g.Begin(root)
			n++
			os.WriteFile(filepath.Join(root, "d050", "s025", fmt.Sprintf("new%d", n)), nil, 0o644)
			if notes := end(false); len(notes) != 0 {
				b.Fatal(notes)
			}
		}
	})
}

// genTree writes files one-line files spread over top × leaf directories
// under a fresh directory and opens it.
func genTree(b *testing.B, top, leaf, files int) *Root {
	base, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for i := range top {
		for k := range leaf {
			dir := filepath.Join(base, fmt.Sprintf("d%03d", i), fmt.Sprintf("s%03d", k))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			for f := range files {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.go", f)), []byte("package x\n"), 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	r, err := Open(base)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	return r
}

// BenchmarkPlantedRepoCheck is the check after a command that changed one
// file, in a tree of 10,101 directories (100 × 100, one file each), with
// the full scan ("full": no watcher, every known directory stated) and
// with the scan limited to the watcher's events ("events": the Sync with
// the watcher included). "edit" rewrites a file, "create" makes a new
// one (and removes the one made before). Runs of -count 1 one after the
// other alternate the two.
func BenchmarkPlantedRepoCheck(b *testing.B) {
	r := genTree(b, 100, 100, 1)
	root := r.Path()
	w, err := watch.New(r, watch.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { w.Close() })
	if w.Mode() == "polling" {
		b.Fatalf("the watcher polls (%s): the events path would not run", w.Problem())
	}
	for _, mode := range []string{"full", "events"} {
		g := sandbox.NewPlantGuard()
		if mode == "events" {
			g.UseEvents(w)
		}
		g.Begin(root)(false)
		n := 0
		cmd := map[string]func(){
			"edit": func() { os.WriteFile(filepath.Join(root, "d050", "s050", "f00.go"), []byte(fmt.Sprint(n)), 0o644) },
			"create": func() { // and remove the last one made, so the directory keeps its size
				os.Remove(filepath.Join(root, "d050", "s050", fmt.Sprintf("new%d", n-1)))
				os.WriteFile(filepath.Join(root, "d050", "s050", fmt.Sprintf("new%d", n)), nil, 0o644)
			},
		}
		for _, what := range []string{"edit", "create"} {
			b.Run(mode+"/"+what, func(b *testing.B) {
				for b.Loop() {
					end := g.Begin(root)
					n++
					cmd[what]()
					if notes := end(false); len(notes) != 0 {
						b.Fatal(notes)
					}
				}
			})
		}
	}
}
