package daemon

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/workspace"
)

// benchSession is a daemon with one open session in a workspace of files
// files (64 bytes each), for the checkpoint benchmarks; closed by done.
func benchSession(b *testing.B, files int) (td *testDaemon, s *openSession, done func()) {
	td = startDaemon(&testing.T{}, sim.Options{}, "") // closed below: a benchmark has no *testing.T
	bigTree(b, td.root, files, 64)
	// The tree's files on their way to the disk would hold up every fsync
	// the benchmark times: flushed first.
	exec.Command("sync").Run()
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.prompt(id, "hello")
	s, err := td.d.lookup(context.Background(), string(id))
	if err != nil {
		b.Fatal(err)
	}
	if w := s.ws.watcher; w != nil { // its first scan of the tree done
		w.Sync(context.Background())
		b.Logf("the workspace's watcher: %s", w.Mode())
	}
	return td, s, func() {
		b.StopTimer() // the teardown is not what is measured
		td.d.Close()
		td.sim.Close()
		os.RemoveAll(filepath.Dir(td.cfg.DataDir))
	}
}

// checkpointTurn records the checkpoint of a turn that changes n files of
// the tree (from file first on), as the file tools do before they write,
// writes them, and ends the turn as a prompt's end does (the budget).
func checkpointTurn(b *testing.B, td *testDaemon, s *openSession, first, n int, write bool) {
	ctx := context.Background()
	s.turnKey.Store(time.Now().UnixNano())
	rec := turnRecorder{db: td.d.db, objects: checkpointObjects(td.cfg.DataDir), session: s.id, turn: s.turnKey.Load(),
		keeper: td.d.ckpt, recorded: &s.checkpointed}
	for i := first; i < first+n; i++ {
		rel := treeFile(i % 100000)
		path := filepath.Join(td.root, rel)
		old, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		now := fmt.Sprintf("changed at %d\n", time.Now().UnixNano())
		if err := rec.before(ctx, workspace.Change{Rel: rel, Existed: true, Mode: 0o644, Old: string(old), New: &now}); err != nil {
			b.Fatal(err)
		}
		if write {
			if err := os.WriteFile(path, []byte(now), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	if s.checkpointed.Swap(false) {
		if err := td.d.ckpt.trim(ctx, s.id, td.cfg.checkpointBudget()); err != nil {
			b.Fatal(err)
		}
	}
}

// A turn's checkpoint costs what it changed, not the workspace's size:
// one changed file in a workspace of a thousand files and of a hundred
// thousand; and a turn that changes nothing (its number, and no budget
// check).
func BenchmarkCheckpoint(b *testing.B) {
	for _, files := range []int{1000, 100000} {
		b.Run(fmt.Sprintf("files=%d/changed=1", files), func(b *testing.B) {
			td, s, done := benchSession(b, files)
			defer done()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				checkpointTurn(b, td, s, i%files, 1, false)
			}
		})
	}
	b.Run("files=1000/changed=0", func(b *testing.B) {
		td, s, done := benchSession(b, 1000)
		defer done()
		ctx := context.Background()
		s.turnNo.prime(ctx, td.d.db, s.id)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			s.turnKey.Store(time.Now().UnixNano())
			s.turnNo.advance(ctx, td.d.db, s.id)
			if s.checkpointed.Swap(false) {
				b.Fatal("a turn that changed nothing checks the budget")
			}
		}
	})
}

// An undo of a turn that touched 100 files.
func BenchmarkUndo(b *testing.B) {
	td, s, done := benchSession(b, 1000)
	defer done()
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		checkpointTurn(b, td, s, 0, 100, true)
		b.StartTimer()
		res, err := undoTurn(ctx, td.d.db, checkpointObjects(td.cfg.DataDir), s, workspace.Editor{})
		if err != nil || len(res.Restored) != 100 {
			b.Fatalf("undo: %v, %d restored: %s", err, len(res.Restored), res.Message)
		}
	}
}
