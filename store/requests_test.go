package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestRequestLog(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	newSession(t, db, "/src/app", "s1")
	newSession(t, db, "/src/app", "s2")
	turn, err := db.Items().BeginTurn(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}

	warm, err := db.Requests().Insert(ctx, Request{SessionID: "s1", Conn: "ws-1", Kind: KindWarmup, FullReason: "warm-up"})
	if err != nil {
		t.Fatal(err)
	}
	sent := time.Date(2025, 5, 1, 9, 0, 0, 42, time.UTC)
	full, err := db.Requests().Insert(ctx, Request{
		SessionID: "s1", TurnID: turn.ID, Conn: "ws-1", Kind: KindFull, FullReason: "new connection",
		PreviousResponseID: "", BytesSent: 12345, InputItems: 7, Sent: sent,
	})
	if err != nil {
		t.Fatal(err)
	}
	inc, err := db.Requests().Insert(ctx, Request{
		SessionID: "s1", TurnID: turn.ID, Conn: "ws-1", Kind: KindIncremental,
		PreviousResponseID: "resp_1", BytesSent: 300, InputItems: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !(warm < full && full < inc) {
		t.Errorf("ids %d, %d, %d not increasing", warm, full, inc)
	}

	first, fin := sent.Add(300*time.Millisecond), sent.Add(2*time.Second)
	if err := db.Requests().Finish(ctx, full, "resp_1", RequestCompleted, "", first, fin); err != nil {
		t.Fatal(err)
	}
	if err := db.Requests().Finish(ctx, inc, "", RequestFailed, "connection reset", time.Time{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := db.Requests().Finish(ctx, inc, "", "done", "", time.Time{}, time.Time{}); err == nil {
		t.Error("Requests.Finish accepted an unknown status")
	}
	if _, err := db.Requests().Insert(ctx, Request{SessionID: "s1", Kind: "partial"}); err == nil {
		t.Error("Requests.Insert accepted an unknown kind")
	}
	if _, err := db.Requests().Insert(ctx, Request{SessionID: "s2", TurnID: turn.ID, Kind: KindFull}); err == nil {
		t.Error("Requests.Insert accepted a turn of another session")
	}

	reqs, err := db.Requests().List(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 3 {
		t.Fatalf("len(requests) = %d, want 3", len(reqs))
	}
	w, f, i := reqs[0], reqs[1], reqs[2]
	if w.ID != warm || w.TurnID != 0 || w.Kind != KindWarmup || w.Status != RequestSent || w.Sent.IsZero() ||
		!w.FirstEvent.IsZero() || !w.Finished.IsZero() || w.Conn != "ws-1" {
		t.Errorf("warm-up = %+v", w)
	}
	want := Request{
		ID: full, SessionID: "s1", TurnID: turn.ID, Conn: "ws-1", Kind: KindFull, FullReason: "new connection",
		ResponseID: "resp_1", BytesSent: 12345, InputItems: 7, Status: RequestCompleted,
		Sent: sent, FirstEvent: first, Finished: fin,
	}
	if f != want {
		t.Errorf("full =\n%+v, want\n%+v", f, want)
	}
	if i.Kind != KindIncremental || i.PreviousResponseID != "resp_1" || i.ResponseID != "" || i.Status != RequestFailed ||
		i.Error != "connection reset" || !i.FirstEvent.IsZero() || i.Finished.IsZero() {
		t.Errorf("incremental = %+v", i)
	}
	if other, err := db.Requests().List(ctx, "s2"); err != nil || len(other) != 0 {
		t.Errorf("Requests(s2) = %v, %v", other, err)
	}
}

// Requests.InsertAfter commits the items, the read-set updates and the request
// row together, or none of them.
func TestInsertRequestAfter(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	newSession(t, db, "/src/app", "s1")
	newSession(t, db, "/src/app", "s2")
	turn, err := db.Items().BeginTurn(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	out := []NewItem{{Origin: OriginInput, Data: []byte(`{"type":"function_call_output","call_id":"c","output":"x"}`), View: []byte(`{"title":"t"}`)}}
	seen := []SeenWrite{{Path: "a.txt", Seen: Seen{Hash: "h1", Content: []byte("alpha")}}}
	id, items, err := db.Requests().InsertAfter(ctx, Request{SessionID: "s1", TurnID: turn.ID, Kind: KindIncremental}, Staged{Items: out, Seen: seen})
	if err != nil || id == 0 || len(items) != 1 || items[0].Seq != 1 {
		t.Fatalf("Requests.InsertAfter: id %d, items %+v, %v", id, items, err)
	}
	stored, _ := db.Items().List(ctx, "s1")
	files, _ := db.Memory().SeenFiles(ctx, "s1")
	reqs, _ := db.Requests().List(ctx, "s1")
	if len(stored) != 1 || string(stored[0].View) != `{"title":"t"}` || files["a.txt"].Hash != "h1" || len(reqs) != 1 {
		t.Fatalf("after the commit: items %d, seen %+v, requests %d", len(stored), files, len(reqs))
	}
	// A turn of another session: nothing of the batch is written.
	other, err := db.Items().BeginTurn(ctx, "s2")
	if err != nil {
		t.Fatal(err)
	}
	seen[0].Seen.Hash = "h2"
	if _, _, err := db.Requests().InsertAfter(ctx, Request{SessionID: "s1", TurnID: other.ID, Kind: KindIncremental}, Staged{Items: out, Seen: seen}); err == nil {
		t.Fatal("a request in another session's turn was stored")
	}
	stored, _ = db.Items().List(ctx, "s1")
	files, _ = db.Memory().SeenFiles(ctx, "s1")
	reqs, _ = db.Requests().List(ctx, "s1")
	if len(stored) != 1 || files["a.txt"].Hash != "h1" || len(reqs) != 1 {
		t.Fatalf("a failed batch left: items %d, seen %+v, requests %d", len(stored), files, len(reqs))
	}
}

// A read round trip's one commit: the response's end and output, the
// reads' outputs and the next request's row together; a response end that
// cannot be recorded writes none of it. CommitStaged does the same without
// a request.
func TestInsertRequestAfterCompletesTheResponse(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	newSession(t, db, "/src/app", "s1")
	turn, err := db.Items().BeginTurn(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	first, err := db.Requests().Insert(ctx, Request{SessionID: "s1", TurnID: turn.ID, Kind: KindFull})
	if err != nil {
		t.Fatal(err)
	}
	items := []NewItem{
		{Origin: OriginOutput, Data: []byte(`{"type":"function_call","call_id":"c","name":"read_file"}`)},
		{Origin: OriginInput, Data: []byte(`{"type":"function_call_output","call_id":"c","output":"x"}`)},
	}
	end := &Completion{ID: first, ResponseID: "resp_1", Status: RequestCompleted, Usage: Usage{Input: 10, Output: 2}}
	bad := &Completion{ID: first + 100, ResponseID: "resp_x", Status: RequestCompleted}
	if _, _, err := db.Requests().InsertAfter(ctx, Request{SessionID: "s1", TurnID: turn.ID, Kind: KindIncremental}, Staged{End: bad, Items: items}); err == nil {
		t.Fatal("the end of an unknown request was recorded")
	}
	if stored, _ := db.Items().List(ctx, "s1"); len(stored) != 0 {
		t.Fatalf("a failed batch left %d items", len(stored))
	}
	if _, _, err := db.Requests().InsertAfter(ctx, Request{SessionID: "s1", TurnID: turn.ID, Kind: KindIncremental}, Staged{End: end, Items: items}); err != nil {
		t.Fatal(err)
	}
	stored, _ := db.Items().List(ctx, "s1")
	reqs, _ := db.Requests().List(ctx, "s1")
	if len(stored) != 2 || stored[0].Origin != OriginOutput || stored[1].Type != "function_call_output" || len(reqs) != 2 ||
		reqs[0].Status != RequestCompleted || reqs[0].ResponseID != "resp_1" || reqs[0].Usage.Input != 10 || reqs[1].Status != RequestSent {
		t.Fatalf("after the commit: items %+v, requests %+v", stored, reqs)
	}
	end = &Completion{ID: reqs[1].ID, ResponseID: "resp_2", Status: RequestIncomplete}
	if _, err := db.Requests().CommitStaged(ctx, "s1", turn.ID, Staged{End: end, Items: items[:1], Seen: []SeenWrite{{Path: "a.txt", Seen: Seen{Hash: "h"}}}}); err != nil {
		t.Fatal(err)
	}
	stored, _ = db.Items().List(ctx, "s1")
	reqs, _ = db.Requests().List(ctx, "s1")
	files, _ := db.Memory().SeenFiles(ctx, "s1")
	if len(stored) != 3 || reqs[1].Status != RequestIncomplete || files["a.txt"].Hash != "h" {
		t.Fatalf("after CommitStaged: %d items, request %+v, seen %+v", len(stored), reqs[1], files)
	}
}

// BenchmarkInsertRequestAfter measures a read round trip's commit: a tool
// output, a read-set update and the next request's row. Its context can be
// cancelled, as the turn's is when the session commits.
func BenchmarkInsertRequestAfter(b *testing.B) {
	ctx, db, req, staged := requestBench(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := db.Requests().InsertAfter(ctx, req, staged); err != nil {
			b.Fatal(err)
		}
	}
}

// requestBench is a session with a running turn, and a request carrying a
// 2 KB tool output and a read-set update, as a read round trip's.
func requestBench(b *testing.B) (context.Context, *DB, Request, Staged) {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	db := openTest(b)
	newSession(b, db, "/src/app", "s1")
	turn, err := db.Items().BeginTurn(ctx, "s1")
	if err != nil {
		b.Fatal(err)
	}
	out := []NewItem{{Origin: OriginInput, Data: []byte(`{"type":"function_call_output","call_id":"c","output":"` + strings.Repeat("x", 2000) + `"}`)}}
	seen := []SeenWrite{{Path: "a.txt", Seen: Seen{Hash: "h", Content: []byte("alpha")}}}
	return ctx, db, Request{SessionID: "s1", TurnID: turn.ID, Kind: KindIncremental, BytesSent: 100}, Staged{Items: out, Seen: seen}
}

// LastCounted is the last request whose response reported usage: not a
// later one that failed, nor one of another session; ErrNotFound before
// any did.
func TestLastCountedRequest(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	newSession(t, db, "/src/app", "s1")
	newSession(t, db, "/src/app", "s2")
	if _, err := db.Requests().LastCounted(ctx, "s1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("LastCounted of a session without requests: %v", err)
	}
	turn, err := db.Items().BeginTurn(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i, u := range []Usage{{Input: 100, Output: 10}, {Input: 200, Cached: 100, Output: 20, Reasoning: 5}} {
		id, err := db.Requests().Insert(ctx, Request{SessionID: "s1", TurnID: turn.ID, Kind: KindFull})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Requests().Complete(ctx, id, fmt.Sprintf("resp_%d", i), RequestCompleted, time.Time{}, time.Time{}, u, "s1", turn.ID, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	failed, err := db.Requests().Insert(ctx, Request{SessionID: "s1", TurnID: turn.ID, Kind: KindIncremental})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Requests().Finish(ctx, failed, "", RequestFailed, "refused", time.Time{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	r, err := db.Requests().LastCounted(ctx, "s1")
	if err != nil || r.ID != ids[1] || r.TurnID != turn.ID || r.ResponseID != "resp_1" || r.Sent.IsZero() ||
		r.Usage != (Usage{Input: 200, Cached: 100, Output: 20, Reasoning: 5}) {
		t.Fatalf("LastCounted = %+v, %v; want request %d", r, err, ids[1])
	}
	if _, err := db.Requests().LastCounted(ctx, "s2"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("LastCounted of s2: %v", err)
	}
}
