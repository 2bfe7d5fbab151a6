package store

import (
	"context"
	"errors"
	"testing"
)

// A fork copies a session's turns (as its own rows), items (with their
// seqs), the compactions and the rewinds made before the cut, and nothing
// after it; a rewind records a range up to the session's last item.
func TestForkAndRewind(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	newSession(t, db, "/src/app", "s")
	newSession(t, db, "/src/app", "f")
	item := []NewItem{{Origin: OriginInput, Data: []byte(`{"type":"message"}`)}}
	if _, err := db.Items().Append(ctx, "s", 0, item); err != nil { // seq 1, initial
		t.Fatal(err)
	}
	var turns []int64
	for range 3 { // seqs 2-3, 4-5, 6-7
		turn, err := db.Items().BeginTurn(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		turns = append(turns, turn.ID)
		if _, err := db.Items().Append(ctx, "s", turn.ID, append(item, item...)); err != nil {
			t.Fatal(err)
		}
	}
	if first, last, err := db.Branches().TurnSpan(ctx, "s", turns[1]); err != nil || first != 4 || last != 5 {
		t.Fatalf("TurnSpan = %d, %d, %v; want 4, 5", first, last, err)
	}
	if _, _, err := db.Branches().TurnSpan(ctx, "f", turns[1]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("TurnSpan of another session's turn: %v", err)
	}
	if _, err := db.Branches().AddCompaction(ctx, Compaction{SessionID: "s", ThroughSeq: 3, Summary: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Branches().AddCompaction(ctx, Compaction{SessionID: "s", ThroughSeq: 5, Summary: "b"}); err != nil {
		t.Fatal(err)
	}
	if r, err := db.Branches().AddRewind(ctx, "s", 6); err != nil || r != (Rewind{6, 7}) {
		t.Fatalf("AddRewind = %+v, %v", r, err)
	}
	if _, err := db.Branches().AddRewind(ctx, "s", 9); err == nil {
		t.Fatal("a rewind past the last item was recorded")
	}

	if err := db.Branches().Fork(ctx, "s", "f", 5); err != nil {
		t.Fatal(err)
	}
	items, err := db.Items().List(ctx, "f")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 5 || items[0].TurnID != 0 {
		t.Fatalf("the fork holds %d items (first in turn %d), want 5 (the first in none)", len(items), items[0].TurnID)
	}
	for _, it := range items[1:] {
		if it.TurnID == turns[0] || it.TurnID == turns[1] || it.TurnID == 0 {
			t.Errorf("item %d of the fork is in turn %d, not one of its own", it.Seq, it.TurnID)
		}
	}
	if items[1].TurnID == items[3].TurnID {
		t.Error("the fork's turns were merged")
	}
	comps, err := db.Branches().Compactions(ctx, "f")
	if err != nil || len(comps) != 1 || comps[0].Summary != "a" {
		t.Fatalf("the fork's compactions = %+v, %v; want the one before the cut", comps, err)
	}
	if rw, err := db.Branches().Rewinds(ctx, "f"); err != nil || len(rw) != 0 {
		t.Fatalf("the fork's rewinds = %+v, %v; want none (the rewind is after the cut)", rw, err)
	}
	if err := db.Branches().Fork(ctx, "s", "f", 5); err == nil {
		t.Fatal("a fork into a session with items succeeded")
	}
}
