package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

func TestTurnLifecycle(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	newSession(t, db, "/src/app", "s1")
	before, err := db.Session(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}

	t1, err := db.Items().BeginTurn(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if t1.Seq != 1 || t1.Status != TurnRunning || t1.SessionID != "s1" || t1.Started.IsZero() || !t1.Ended.IsZero() {
		t.Errorf("first turn = %+v", t1)
	}
	s, err := db.Session(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if !s.Updated.Equal(t1.Started) || s.Updated.Before(before.Updated) {
		t.Errorf("session updated = %v, want the turn start %v", s.Updated, t1.Started)
	}

	if err := db.Items().EndTurn(ctx, t1.ID, TurnFailed, "", "stream reset"); err != nil {
		t.Fatal(err)
	}
	if err := db.Items().EndTurn(ctx, t1.ID, TurnCompleted, "", ""); !errors.Is(err, ErrNotRunning) {
		t.Errorf("ending twice: %v, want ErrNotRunning", err)
	}
	t2, err := db.Items().BeginTurn(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Items().EndTurn(ctx, t2.ID, TurnRunning, "", ""); err == nil {
		t.Error("EndTurn accepted status running")
	}
	if err := db.Items().EndTurn(ctx, t2.ID, TurnCompleted, "end_turn", ""); err != nil {
		t.Fatal(err)
	}

	turns, err := db.Items().Turns(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 2 {
		t.Fatalf("len(turns) = %d, want 2", len(turns))
	}
	if got := turns[0]; got.ID != t1.ID || got.Seq != 1 || got.Status != TurnFailed || got.Error != "stream reset" ||
		!got.Started.Equal(t1.Started) || got.Ended.Before(got.Started) {
		t.Errorf("turns[0] = %+v", got)
	}
	if got := turns[1]; got.Seq != 2 || got.Status != TurnCompleted || got.StopReason != "end_turn" || got.Ended.IsZero() {
		t.Errorf("turns[1] = %+v", got)
	}
	if none, err := db.Items().Turns(ctx, "nope"); err != nil || len(none) != 0 {
		t.Errorf("Turns(unknown) = %v, %v", none, err)
	}
}

// TestInterruptRunningAfterRestart: turns left running when the daemon
// stopped are marked interrupted at the next start, and only those.
func TestInterruptRunningAfterRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hearth.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	newSession(t, db, "/src/app", "s1")
	newSession(t, db, "/src/app", "s2")
	done, err := db.Items().BeginTurn(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Items().EndTurn(ctx, done.ID, TurnCompleted, "end_turn", ""); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"s1", "s2"} {
		if _, err := db.Items().BeginTurn(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = mustOpen(t, path)
	n, err := db.Items().InterruptRunning(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("InterruptRunning = %d, want 2", n)
	}
	for _, id := range []string{"s1", "s2"} {
		turns, err := db.Items().Turns(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		last := turns[len(turns)-1]
		if last.Status != TurnInterrupted || last.Ended.IsZero() || last.Error == "" {
			t.Errorf("%s last turn = %+v, want interrupted with an end time", id, last)
		}
		if id == "s1" && turns[0].Status != TurnCompleted {
			t.Errorf("completed turn changed to %s", turns[0].Status)
		}
	}
	if n, err := db.Items().InterruptRunning(ctx); err != nil || n != 0 {
		t.Errorf("second InterruptRunning = %d, %v; want 0", n, err)
	}
}
