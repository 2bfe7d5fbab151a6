package store

import (
	"context"
	"testing"
)

// TestCheckpoints: the first change of a file in a turn keeps its
// pre-image, the last its post-image; the last turn that changed anything
// comes back, a turn that changed nothing is passed over, an undone turn
// too, and sessions keep their own.
func TestCheckpoints(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	newSession(t, db, "/w", "s1")
	newSession(t, db, "/w", "s2")
	cp := db.Checkpoints()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(cp.Record(ctx, "s1", 1, FileCheckpoint{Path: "a", PreHash: "a0", PreMode: 0o644, Post: "a1"}))
	must(cp.Record(ctx, "s1", 2, FileCheckpoint{Path: "a", PreHash: "a1", PreMode: 0o644, Post: "a2"}))
	must(cp.Record(ctx, "s1", 2, FileCheckpoint{Path: "a", PreHash: "a2", PreMode: 0o600, Post: "a3"}))
	must(cp.Record(ctx, "s1", 2, FileCheckpoint{Path: "new", Post: "n1"}))
	must(cp.Record(ctx, "s1", 3, FileCheckpoint{Path: "same", PreHash: "x", Post: "x"}))
	must(cp.Record(ctx, "s2", 9, FileCheckpoint{Path: "b", PreHash: "b0", Post: ""}))

	turn, files, found, err := cp.LastChanged(ctx, "s1")
	must(err)
	if !found || turn != 2 || len(files) != 2 ||
		files[0] != (FileCheckpoint{Path: "a", PreHash: "a1", PreMode: 0o644, Post: "a3"}) || files[1] != (FileCheckpoint{Path: "new", Post: "n1"}) {
		t.Fatalf("LastChanged(s1) = %d, %+v, %v", turn, files, found)
	}
	must(cp.MarkUndone(ctx, "s1", 2))
	if turn, files, found, _ = cp.LastChanged(ctx, "s1"); !found || turn != 1 || len(files) != 1 || files[0].Post != "a1" {
		t.Fatalf("LastChanged(s1) after undoing turn 2 = %d, %+v, %v", turn, files, found)
	}
	must(cp.MarkUndone(ctx, "s1", 1))
	if _, _, found, _ = cp.LastChanged(ctx, "s1"); found {
		t.Fatal("LastChanged(s1) found a turn after all were undone")
	}
	if turn, files, found, _ = cp.LastChanged(ctx, "s2"); !found || turn != 9 || files[0] != (FileCheckpoint{Path: "b", PreHash: "b0"}) {
		t.Fatalf("LastChanged(s2) = %d, %+v, %v", turn, files, found)
	}
	must(db.DeleteSession(ctx, "s2"))
	if _, _, found, _ = cp.LastChanged(ctx, "s2"); found {
		t.Fatal("a deleted session's checkpoints stayed")
	}
}
