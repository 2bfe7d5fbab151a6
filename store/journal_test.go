//go:build unix

package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// journalRig is a session with a running turn whose first request went
// through a transaction, so that the next ones may be journaled.
type journalRig struct {
	db    *DB
	turn  Turn
	first int64 // the first request's id
}

func newJournalRig(t *testing.T, db *DB) journalRig {
	t.Helper()
	ctx := context.Background()
	newSession(t, db, "/src/app", "s1")
	turn, err := db.BeginTurn(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	first, err := db.JournalRequest(ctx, Request{SessionID: "s1", TurnID: turn.ID, Kind: KindFull}, Staged{})
	if err != nil {
		t.Fatal(err)
	}
	if db.jpending.Load() {
		t.Fatal("a turn's first request was journaled: its session and turn were not checked")
	}
	return journalRig{db: db, turn: turn, first: first}
}

// roundTrip journals what a read round trip commits: the first request's
// response (a call), its output, a read-set entry and the next request.
func (rig journalRig) roundTrip(t *testing.T) int64 {
	t.Helper()
	end := &Completion{ID: rig.first, ResponseID: "resp_1", Status: RequestCompleted, Usage: Usage{Input: 10, Output: 3}}
	items := []NewItem{
		{Origin: OriginOutput, Data: []byte(`{"type":"function_call","call_id":"c1","name":"read_file","arguments":"{\"path\":\"a.txt\"}"}`)},
		{Origin: OriginInput, Data: []byte(`{"type":"function_call_output", "call_id":"c1", "output":"alpha"}`), View: []byte(`{"title":"Read a.txt"}`)},
	}
	id, err := rig.db.JournalRequest(context.Background(), Request{SessionID: "s1", TurnID: rig.turn.ID, Kind: KindIncremental,
		PreviousResponseID: "resp_1", BytesSent: 77, InputItems: 1},
		Staged{End: end, Items: items, Seen: []SeenWrite{{Path: "a.txt", Seen: Seen{Hash: "h1", Content: []byte("alpha")}}}})
	if err != nil {
		t.Fatal(err)
	}
	if !rig.db.jpending.Load() {
		t.Fatal("the round trip's request was not journaled")
	}
	return id
}

// checkRoundTrip checks that db holds everything roundTrip journaled,
// once.
func checkRoundTrip(t *testing.T, db *DB, first, second int64) {
	t.Helper()
	ctx := context.Background()
	reqs, err := db.Requests(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 || reqs[0].ID != first || reqs[1].ID != second {
		t.Fatalf("requests: %+v, want ids %d and %d", reqs, first, second)
	}
	if r := reqs[0]; r.Status != RequestCompleted || r.ResponseID != "resp_1" || r.Usage.Input != 10 {
		t.Errorf("the first request's end was not applied: %+v", r)
	}
	if r := reqs[1]; r.Kind != KindIncremental || r.PreviousResponseID != "resp_1" || r.BytesSent != 77 || r.Status != RequestSent || r.Sent.IsZero() {
		t.Errorf("the journaled request: %+v", r)
	}
	items, err := db.Items(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 {
		t.Fatalf("%d items, want 2: %+v", len(items), items)
	}
	// Byte for byte, spaces included.
	if got := string(items[1].Data); got != `{"type":"function_call_output", "call_id":"c1", "output":"alpha"}` {
		t.Errorf("the output item's data changed: %s", got)
	}
	if items[0].Seq != 1 || items[1].Seq != 2 || items[1].Type != "function_call_output" || string(items[1].View) != `{"title":"Read a.txt"}` || items[0].View != nil {
		t.Errorf("items: %+v", items)
	}
	seen, err := db.SeenFiles(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if s := seen["a.txt"]; s.Hash != "h1" || string(s.Content) != "alpha" {
		t.Errorf("read set: %+v", seen)
	}
}

// crashImage copies db's files as a process killed now would leave them
// (no write is in progress while wmu is held) into a new directory, and
// returns the copy's database path.
func crashImage(t *testing.T, db *DB) string {
	t.Helper()
	db.wmu.Lock()
	defer db.wmu.Unlock()
	dir := t.TempDir()
	for _, suffix := range []string{"", "-wal", journalSuffix} {
		b, err := os.ReadFile(db.path + suffix)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "hearth.db"+suffix), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "hearth.db")
}

// A journaled round trip is read back by the same DB before anything
// applied it explicitly: reads apply the record first.
func TestJournalRequestIsReadBack(t *testing.T) {
	db := openTest(t)
	rig := newJournalRig(t, db)
	second := rig.roundTrip(t)
	if second != rig.first+1 {
		t.Errorf("journaled request id %d, want %d", second, rig.first+1)
	}
	checkRoundTrip(t, db, rig.first, second)
	if db.jpending.Load() {
		t.Error("the record is still pending after a read")
	}
	fi, err := os.Stat(db.path + journalSuffix)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("journal mode %v, want 0600", fi.Mode().Perm())
	}
}

// The daemon killed after a round trip's record was written, before it
// was applied: Open applies it, and the journal is empty after.
func TestJournalReplayAfterCrash(t *testing.T) {
	db := openTest(t)
	rig := newJournalRig(t, db)
	second := rig.roundTrip(t)
	path := crashImage(t, db)

	re := mustOpen(t, path)
	checkRoundTrip(t, re, rig.first, second)
	f, err := os.Open(path + journalSuffix)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if rec, err := readJournal(f); err != nil || rec != nil {
		t.Errorf("the journal after the replay: %+v, %v; want empty", rec, err)
	}
	// The replayed DB goes on: the next request gets the next id.
	id, err := re.JournalRequest(context.Background(), Request{SessionID: "s1", TurnID: rig.turn.ID, Kind: KindIncremental}, Staged{})
	if err != nil || id != second+1 {
		t.Errorf("next request after the replay: id %d, %v; want %d", id, err, second+1)
	}
}

// Killed after the record was applied but before the journal was cleared:
// the replay recognises the record and applies nothing twice.
func TestJournalReplaySkipsApplied(t *testing.T) {
	db := openTest(t)
	rig := newJournalRig(t, db)
	second := rig.roundTrip(t)
	record, err := os.ReadFile(db.path + journalSuffix)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	path := crashImage(t, db)
	if err := os.WriteFile(path+journalSuffix, record, 0o600); err != nil {
		t.Fatal(err)
	}
	checkRoundTrip(t, mustOpen(t, path), rig.first, second)
}

// A record cut short (the process killed inside the write(2), so the
// request was never sent) or damaged is not applied, and Open goes on.
func TestJournalTornRecordIsDropped(t *testing.T) {
	for _, tc := range []struct {
		name string
		tear func(b []byte) []byte
	}{
		{"short", func(b []byte) []byte { return b[:len(b)-10] }},
		{"damaged", func(b []byte) []byte { b[len(b)-2] ^= 0x40; return b }},
		{"header only", func(b []byte) []byte { return b[:recordHeader-3] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := openTest(t)
			rig := newJournalRig(t, db)
			rig.roundTrip(t)
			path := crashImage(t, db)
			b, err := os.ReadFile(path + journalSuffix)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path+journalSuffix, tc.tear(b), 0o600); err != nil {
				t.Fatal(err)
			}
			re := mustOpen(t, path)
			reqs, err := re.Requests(context.Background(), "s1")
			if err != nil {
				t.Fatal(err)
			}
			items, err := re.Items(context.Background(), "s1")
			if err != nil {
				t.Fatal(err)
			}
			if len(reqs) != 1 || reqs[0].Status != RequestSent || len(items) != 0 {
				t.Errorf("a torn record was applied: requests %+v, items %+v", reqs, items)
			}
		})
	}
}

// A second process writing the same database commits directly; when it
// takes the id the journal handed out, the record gets another and the
// first process's later writes by the old id reach its own row.
func TestJournalSecondWriterTakesTheID(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	rig := newJournalRig(t, db)
	other := mustOpen(t, db.path)
	if other.jr != nil {
		t.Fatal("a second DB on the same file journals too")
	}
	second := rig.roundTrip(t)
	newSession(t, other, "/src/other", "s2")
	taken, err := other.InsertRequest(ctx, Request{SessionID: "s2", Kind: KindWarmup})
	if err != nil {
		t.Fatal(err)
	}
	if taken != second {
		t.Fatalf("the other writer got id %d; the test needs it to take the journal's %d", taken, second)
	}
	if err := db.FinishRequest(ctx, second, "resp_2", RequestFailed, "boom", time.Time{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	mine, err := db.Requests(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := db.Requests(ctx, "s2")
	if err != nil {
		t.Fatal(err)
	}
	if len(theirs) != 1 || theirs[0].ID != taken || theirs[0].Status != RequestSent {
		t.Errorf("the other writer's request was changed: %+v", theirs)
	}
	if len(mine) != 2 || mine[1].ID == taken || mine[1].Status != RequestFailed || mine[1].Error != "boom" || mine[1].PreviousResponseID != "resp_1" {
		t.Errorf("the journaled request: %+v", mine)
	}
}

// Journaling never skips the checks a transaction makes: a request in a
// session deleted since its turn was checked is refused before it is
// written, as InsertRequestAfter refuses it.
func TestJournalRequestChecksAfterDelete(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	rig := newJournalRig(t, db)
	if err := db.DeleteSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	_, err := db.JournalRequest(ctx, Request{SessionID: "s1", TurnID: rig.turn.ID, Kind: KindIncremental}, Staged{})
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("request in a deleted session: %v, want ErrNotFound", err)
	}
	if db.jpending.Load() {
		t.Error("the refused request was journaled")
	}
	_, err = db.JournalRequest(ctx, Request{SessionID: "s1", TurnID: rig.turn.ID, Kind: "bogus"}, Staged{})
	if err == nil || !strings.Contains(err.Error(), "invalid kind") {
		t.Errorf("bad kind: %v", err)
	}
}

// Close applies what is pending and removes the journal.
func TestJournalCloseApplies(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	rig := newJournalRig(t, db)
	second := rig.roundTrip(t)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(db.path + journalSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("journal after Close: %v, want it removed", err)
	}
	checkRoundTrip(t, mustOpen(t, db.path), rig.first, second)
}

// Killed with a record whose end names an id another process had taken
// (the dead process mapped it; the map died with it): the replay applies
// the rest of the record and leaves the other process's row alone.
func TestJournalReplayEndOfTakenID(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	rig := newJournalRig(t, db)
	other := mustOpen(t, db.path)
	second := rig.roundTrip(t)
	newSession(t, other, "/src/other", "s2")
	if taken, err := other.InsertRequest(ctx, Request{SessionID: "s2", Kind: KindWarmup}); err != nil || taken != second {
		t.Fatalf("the other writer got id %d (%v); the test needs the journal's %d", taken, err, second)
	}
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// The next round trip ends the second request by the id the session
	// holds, and is cut off by a kill before it is applied.
	third, err := db.JournalRequest(ctx, Request{SessionID: "s1", TurnID: rig.turn.ID, Kind: KindIncremental, PreviousResponseID: "resp_2"},
		Staged{End: &Completion{ID: second, ResponseID: "resp_2", Status: RequestCompleted},
			Items: []NewItem{{Origin: OriginInput, Data: []byte(`{"type":"function_call_output","call_id":"c2","output":"beta"}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	re := mustOpen(t, crashImage(t, db))
	theirs, err := re.Requests(ctx, "s2")
	if err != nil || len(theirs) != 1 || theirs[0].Status != RequestSent || theirs[0].ResponseID != "" {
		t.Errorf("the other process's request after the replay: %+v, %v", theirs, err)
	}
	mine, err := re.Requests(ctx, "s1")
	if err != nil || len(mine) != 3 || mine[2].ID != third || mine[2].PreviousResponseID != "resp_2" {
		t.Fatalf("the replayed request is missing: %+v, %v", mine, err)
	}
	items, err := re.Items(ctx, "s1")
	if err != nil || len(items) != 3 || !strings.Contains(string(items[2].Data), "beta") {
		t.Errorf("the replayed output is missing: %+v, %v", items, err)
	}
}
