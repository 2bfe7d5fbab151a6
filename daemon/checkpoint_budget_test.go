package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// bigTree writes files files of size bytes each (distinct contents) under
// root/tree, a hundred a directory.
func bigTree(t testing.TB, root string, files, size int) {
	t.Helper()
	for i := 0; i < files; i++ {
		dir := filepath.Join(root, "tree", fmt.Sprintf("d%03d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		body := strings.Repeat(fmt.Sprintf("file %06d\n", i), size/12+1)[:size]
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%06d.txt", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// treeFile is the path of bigTree's file i, relative to the root.
func treeFile(i int) string { return fmt.Sprintf("tree/d%03d/f%06d.txt", i/100, i) }

// storeIsWithin checks the checkpoint store against its budget: the
// objects' bytes and the checkpointed turns within it, every object named
// by a row and every row's object there, no temporary file left.
func storeIsWithin(t testing.TB, td *testDaemon, maxBytes int64, maxTurns int, ids ...acp.SessionId) (objects int) {
	t.Helper()
	ctx := context.Background()
	refs, err := td.d.db.Checkpoints().Referenced(ctx)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(checkpointObjects(td.cfg.DataDir).dir)
	var bytes int64
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		bytes += fi.Size()
		if !refs[e.Name()] {
			t.Errorf("%s is in the checkpoint store and no checkpoint needs it", e.Name())
		}
	}
	if len(entries) != len(refs) {
		t.Errorf("%d objects in the store for %d hashes the rows keep", len(entries), len(refs))
	}
	turns := 0
	for _, id := range ids {
		changed, err := td.d.db.Checkpoints().ChangedSince(ctx, string(id), 0)
		if err != nil {
			t.Fatal(err)
		}
		turns += len(changed)
	}
	if bytes > maxBytes || turns > maxTurns {
		t.Errorf("the checkpoint store holds %d bytes in %d turns; its budget is %d bytes, %d turns", bytes, turns, maxBytes, maxTurns)
	}
	return len(entries)
}

// Many turns in a big workspace keep the checkpoint store under its budget
// (the size or the count, whichever binds) with no object outside it: the
// oldest checkpoints go first, and the log, an undo and a rewind past them
// say so; the last turns can still be undone; a deleted session's
// checkpoints go with it, objects included, and a start sweeps orphans
// and temporary files. (The figures are 1,000 turns and 100,000 files
// scaled down, in the same shape.)
func TestCheckpointBudget(t *testing.T) {
	const files, size, turns = 3000, 4 << 10, 150
	const maxTurns = 100
	const maxBytes = 40*size + size/2 // binds before the count does
	td := startDaemonWith(t, sim.Options{}, "", func(c *Config) {
		c.CheckpointBytes, c.CheckpointTurns = maxBytes, maxTurns
	})
	bigTree(t, td.root, files, size)
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeFullAuto}, nil)
	for i := 0; i < turns; i++ {
		ed.prompt(id, simSteps(t, []any{"write_file", map[string]string{"path": treeFile(i * 7), "content": fmt.Sprintf("turn %d\n", i)}}))
	}
	if n := storeIsWithin(t, td, maxBytes, maxTurns, id); n < 30 {
		t.Errorf("only %d objects kept: the budget holds 40", n)
	}
	if !strings.Contains(td.logs.String(), "the oldest checkpoints were dropped") {
		t.Error("the log does not say checkpoints were dropped")
	}

	ed.forget()
	ed.prompt(id, "/undo")
	if got := agentText(ed.updates()); !strings.Contains(got, "Restored: "+treeFile((turns-1)*7)+".") {
		t.Errorf("/undo of the last turn answered %q", got)
	}
	ed.forget()
	ed.prompt(id, "/rewind 1")
	if got := agentText(ed.updates()); !strings.Contains(got, "were dropped to keep the workspace's checkpoints within their budget") {
		t.Errorf("/rewind past the budget answered %q", got)
	}
	if body, _ := os.ReadFile(filepath.Join(td.root, treeFile(0))); !strings.HasPrefix(string(body), "turn 0") {
		t.Errorf("the first turn's file, past the budget, was changed: %.20q", body)
	}
	if body, _ := os.ReadFile(filepath.Join(td.root, treeFile(140*7))); !strings.HasPrefix(string(body), "file ") {
		t.Errorf("a late turn's file was not put back: %.20q", body)
	}

	dir := checkpointObjects(td.cfg.DataDir).dir
	os.WriteFile(filepath.Join(dir, ".tmp-123"), []byte("cut short"), 0o600)
	os.WriteFile(filepath.Join(dir, strings.Repeat("0", 64)), []byte("orphan"), 0o600)
	td.d.Close()
	td.restart()
	storeIsWithin(t, td, maxBytes, maxTurns, id)

	ed = td.connect()
	ed.initialize()
	ed.must(rpc.MethodSessionDelete, acp.UnstableDeleteSessionRequest{SessionId: id}, nil)
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("%d objects left after the session's deletion", len(entries))
	}
}

// BenchmarkCheckpointBudgetFull is TestCheckpointBudget at the issue's
// scale, run once (-benchtime 1x): 1,000 turns, each changing a file of a
// 100,000-file workspace, against a budget of 200 turns' bytes and 500
// turns; the store must hold no more than its budget and no object
// outside it. It reports the turn's time and the store's size.
func BenchmarkCheckpointBudgetFull(b *testing.B) {
	const files, size, turns = 100_000, 1 << 10, 1000
	const maxTurns, maxBytes = 500, 200 * size
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		td := startDaemonWith(&testing.T{}, sim.Options{}, "", func(c *Config) { // closed below: a benchmark has no *testing.T
			c.CheckpointBytes, c.CheckpointTurns = maxBytes, maxTurns
		})
		bigTree(b, td.root, files, size)
		ed := td.connect()
		ed.initialize()
		id := ed.newSession(td.root)
		ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeFullAuto}, nil)
		b.StartTimer()
		for k := 0; k < turns; k++ {
			ed.prompt(id, simSteps(b, []any{"write_file", map[string]string{"path": treeFile(k * 97 % files), "content": fmt.Sprintf("turn %d\n", k)}}))
		}
		b.StopTimer()
		objects := storeIsWithin(b, td, maxBytes, maxTurns, id)
		b.ReportMetric(float64(objects), "objects")
		td.d.Close()
		td.sim.Close()
		os.RemoveAll(filepath.Dir(td.cfg.DataDir))
		os.RemoveAll(td.root)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*turns), "µs/turn")
}
