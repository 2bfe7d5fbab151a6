package daemon

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hearthd/hearth/store"
)

// benchCommandChanges is a session's commandChanges on a real store, in a
// fresh workspace.
func benchCommandChanges(b *testing.B) (*commandChanges, string) {
	dir := b.TempDir()
	db, err := store.Open(filepath.Join(dir, "hearth.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	root := filepath.Join(dir, "ws")
	os.Mkdir(root, 0o755)
	if err := db.CreateSession(context.Background(), store.Session{ID: "s1", Root: root, Mode: ModeFullAuto}); err != nil {
		b.Fatal(err)
	}
	turn := &atomic.Int64{}
	turn.Store(1)
	c := &commandChanges{db: db, objects: checkpointObjects(filepath.Join(dir, "data")), session: "s1", root: root,
		turn: turn, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		kept: map[turnPath]store.FileCheckpoint{}, pending: map[turnPath]int{}, keeping: map[turnPath]chan struct{}{}}
	return c, root
}

// BenchmarkCommandCheckpoint: what the daemon spends on one file a
// command changes, once the trap told it (Before) and the call ended
// (settle, one transaction for the call's files), in a call that changes
// 100 files: files it creates, and 4 KiB files it modifies (each
// pre-image written to the object store, fsynced, and its row committed
// before the change).
func BenchmarkCommandCheckpoint(b *testing.B) {
	const files = 100
	for _, created := range []bool{true, false} {
		name := "modified"
		if created {
			name = "created"
		}
		b.Run(name, func(b *testing.B) {
			c, root := benchCommandChanges(b)
			body := strings.Repeat("y", 4096)
			call := 0
			for b.Loop() {
				call++
				b.StopTimer()
				rels := make([]string, files)
				for i := range rels {
					rels[i] = fmt.Sprintf("f%d-%d", call, i)
					if !created {
						os.WriteFile(filepath.Join(root, rels[i]), []byte(rels[i]+body), 0o644)
					}
				}
				b.StartTimer()
				for _, rel := range rels {
					c.Before(rel)
				}
				b.StopTimer() // the command's own writes
				for _, rel := range rels {
					os.WriteFile(filepath.Join(root, rel), []byte("z"), 0o644)
				}
				b.StartTimer()
				c.settle()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*files), "µs/file")
		})
	}
}
