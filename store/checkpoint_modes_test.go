package store

import (
	"context"
	"testing"
)

// TestCheckpointModeAlone: a turn that left a file's content as it was
// but its mode changed is a change (LastChanged, ChangedSince and
// FilesBetween see it, with both modes); one whose mode is unknown or the
// same is not.
func TestCheckpointModeAlone(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	newSession(t, db, "/w", "s1")
	cp := db.Checkpoints()
	if err := cp.Record(ctx, "s1", 1, FileCheckpoint{Path: "run.sh", PreHash: "h", PreMode: 0o644, Post: "h", PostMode: 0o755}); err != nil {
		t.Fatal(err)
	}
	if err := cp.RecordAll(ctx, "s1", []TurnFile{
		{Turn: 2, FileCheckpoint: FileCheckpoint{Path: "a", PreHash: "x", PreMode: 0o644, Post: "x", PostMode: 0o644}},
		{Turn: 2, FileCheckpoint: FileCheckpoint{Path: "b", PreHash: "y", PreMode: 0o644, Post: "y"}},
	}); err != nil {
		t.Fatal(err)
	}
	turn, files, found, err := cp.LastChanged(ctx, "s1")
	want := FileCheckpoint{Path: "run.sh", PreHash: "h", PreMode: 0o644, Post: "h", PostMode: 0o755}
	if err != nil || !found || turn != 1 || len(files) != 1 || files[0] != want {
		t.Fatalf("LastChanged = %d, %+v, %v, %v; want turn 1 with %+v", turn, files, found, err, want)
	}
	if n, err := cp.FilesBetween(ctx, "s1", 0, 2); err != nil || n != 1 {
		t.Errorf("FilesBetween = %d, %v; want 1", n, err)
	}
	turns, err := cp.ChangedSince(ctx, "s1", 0)
	if err != nil || len(turns) != 2 || turns[0].Files[0].PostMode != 0o644 || turns[1].Files[0] != want {
		t.Errorf("ChangedSince = %+v, %v", turns, err)
	}
}
