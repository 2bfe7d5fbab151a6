package store

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// The writer never checkpoints on its own; the checkpointer copies the
// log back once the writer is quiet after enough commits, and the copy is
// complete.
func TestCheckpointerCopiesTheLogOffTheWritePath(t *testing.T) {
	db := openTest(t)
	var auto int
	if err := db.wconn.QueryRowContext(context.Background(), `PRAGMA wal_autocheckpoint`).Scan(&auto); err != nil || auto != 0 {
		t.Fatalf("writer's wal_autocheckpoint = %d (%v), want 0", auto, err)
	}
	ran := db.ckpt.ranSignal()
	newSession(t, db, "/src/app", "s1")
	for i := 0; i < checkpointMin; i++ {
		if _, err := db.Items().Append(context.Background(), "s1", 0, []NewItem{{Origin: OriginInput,
			Data: []byte(`{"type":"message","text":"` + strings.Repeat("x", 3000) + `"}`)}}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("no checkpoint within 10 s of the last commit")
	}
	// Everything in the log is in the database file now: a second
	// checkpoint has nothing left to copy.
	var busy, log, copied int
	if err := db.ckpt.conn.QueryRow(`PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &copied); err != nil {
		t.Fatal(err)
	}
	if busy != 0 || log != copied {
		t.Errorf("after the checkpointer ran: busy %d, %d frames in the log, %d copied", busy, log, copied)
	}
	if fi, err := os.Stat(db.path); err != nil || fi.Size() < checkpointMin*3000 {
		t.Errorf("database file holds %v bytes (%v), want the %d items", fi.Size(), err, checkpointMin)
	}
	if db.ckpt.runs.Load() == 0 {
		t.Error("checkpoint count is 0")
	}
}

// Under a steady stream of commits with no quiet moment, the checkpointer
// still runs once checkpointForce commits are pending, so the log stays
// bounded. The commits go on until it has (a loaded machine may take a
// while to copy the log back), and it must be the forced checkpoint that
// ran, not one after a quiet moment.
func TestCheckpointerRunsUnderSteadyLoad(t *testing.T) {
	db := openTest(t)
	// No quiet moment: a loaded machine that pauses this loop for 20 ms
	// would otherwise checkpoint then, and the force would never come.
	db.ckpt.quiet.Store(int64(time.Hour))
	newSession(t, db, "/src/app", "s1")
	deadline := time.Now().Add(20 * time.Second)
	commits := int(db.ckpt.pending.Load()) // the session's own count too
	for db.ckpt.forced.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no forced checkpoint during %d back-to-back commits", commits)
		}
		if err := db.SetSessionTitle(context.Background(), "s1", "t"); err != nil {
			t.Fatal(err)
		}
		commits++
	}
	if commits < checkpointForce {
		t.Errorf("a forced checkpoint after %d commits, fewer than %d", commits, checkpointForce)
	}
}
