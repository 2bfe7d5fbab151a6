package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestSeenAndPermissions(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	newSession(t, db, "/w", "s1")
	newSession(t, db, "/w", "s2")
	if err := db.Memory().SetSeen(ctx, "s1", "a.txt", Seen{Hash: "h1", Content: []byte("one\n")}); err != nil {
		t.Fatal(err)
	}
	if err := db.Memory().SetSeen(ctx, "s1", "a.txt", Seen{Hash: "h2", Content: []byte("two\n")}); err != nil {
		t.Fatal(err)
	}
	if err := db.Memory().SetSeen(ctx, "s1", "big.bin", Seen{Hash: "h3"}); err != nil {
		t.Fatal(err)
	}
	got, err := db.Memory().SeenFiles(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["a.txt"].Hash != "h2" || string(got["a.txt"].Content) != "two\n" || got["big.bin"].Content != nil {
		t.Fatalf("seen = %+v", got)
	}
	if other, _ := db.Memory().SeenFiles(ctx, "s2"); len(other) != 0 {
		t.Fatalf("s2 sees s1's files: %+v", other)
	}
	if rs, _ := db.Memory().ReadSet(ctx, "s1"); rs["a.txt"] != "h2" {
		t.Fatalf("ReadSet disagrees: %+v", rs)
	}
	for path, want := range map[string][]byte{"a.txt": []byte("two\n"), "big.bin": nil, "absent": nil} {
		if got, err := db.Memory().SeenContent(ctx, "s1", path); err != nil || string(got) != string(want) || (got == nil) != (want == nil) {
			t.Errorf("SeenContent %s = %q, %v; want %q", path, got, err, want)
		}
	}
	if err := db.Memory().ForgetSeen(ctx, "s1", "big.bin"); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Memory().SeenFiles(ctx, "s1"); len(got) != 1 {
		t.Fatalf("after ForgetSeen: %+v", got)
	}
	if err := db.Memory().SetSeen(ctx, "nope", "x", Seen{Hash: "h"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}

	if err := db.Memory().SetPermission(ctx, "s1", "shell", Allow); err != nil {
		t.Fatal(err)
	}
	if err := db.Memory().SetPermission(ctx, "s1", "shell", Reject); err != nil {
		t.Fatal(err)
	}
	if err := db.Memory().SetPermission(ctx, "s1", "write_file", Allow); err != nil {
		t.Fatal(err)
	}
	p, err := db.Memory().Permissions(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 2 || p["shell"] != Reject || p["write_file"] != Allow {
		t.Fatalf("permissions = %+v", p)
	}
	if err := db.Memory().SetPermission(ctx, "s1", "shell", Decision("maybe")); err == nil {
		t.Fatal("a decision outside allow/reject was stored")
	}
}

// Permissions are kept once read; what the caller does with the map, and
// every later change, must still show.
func TestPermissionsKeptFollowChanges(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	newSession(t, db, "/w", "s1")
	perms := func() map[string]Decision {
		t.Helper()
		p, err := db.Memory().Permissions(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := perms(); len(p) != 0 {
		t.Fatalf("a new session has permissions: %+v", p)
	}
	perms()["shell"] = Allow // the caller's copy
	if p := perms(); len(p) != 0 {
		t.Fatalf("a caller's change to its map was kept: %+v", p)
	}
	if err := db.Memory().SetPermission(ctx, "s1", "shell", Reject); err != nil {
		t.Fatal(err)
	}
	if p := perms(); p["shell"] != Reject {
		t.Fatalf("after SetPermission: %+v", p)
	}
	if err := db.Memory().SetPermission(ctx, "s1", "shell", Allow); err != nil {
		t.Fatal(err)
	}
	if p := perms(); len(p) != 1 || p["shell"] != Allow {
		t.Fatalf("after a second SetPermission: %+v", p)
	}
	if err := db.DeleteSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if p := perms(); len(p) != 0 {
		t.Fatalf("a deleted session's permissions: %+v", p)
	}
}

// Requests.Complete finishes the request and appends the output in one
// transaction: a bad item leaves both undone.
func TestCompleteRequestIsAtomic(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	newSession(t, db, "/w", "s1")
	turn, err := db.Items().BeginTurn(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	id, err := db.Requests().Insert(ctx, Request{SessionID: "s1", TurnID: turn.ID, Conn: "ws-1", Kind: KindFull})
	if err != nil {
		t.Fatal(err)
	}
	bad := []NewItem{{Origin: OriginOutput, Data: []byte(`{"type":"message"}`)}, {Origin: OriginOutput, Data: []byte(`[1]`)}}
	if _, err := db.Requests().Complete(ctx, id, "resp_1", RequestCompleted, time.Time{}, time.Time{}, Usage{}, "s1", turn.ID, bad); err == nil {
		t.Fatal("a bad item was accepted")
	}
	reqs, _ := db.Requests().List(ctx, "s1")
	items, _ := db.Items().List(ctx, "s1")
	if reqs[0].Status != RequestSent || len(items) != 0 {
		t.Fatalf("after a refused completion: status %q, %d items", reqs[0].Status, len(items))
	}
	good := []NewItem{{Origin: OriginOutput, Data: []byte(`{"type":"message","id":"m1"}`)}}
	out, err := db.Requests().Complete(ctx, id, "resp_1", RequestCompleted, time.Time{}, time.Time{}, Usage{Input: 100, Cached: 60, Output: 20, Reasoning: 8}, "s1", turn.ID, good)
	if err != nil || len(out) != 1 || out[0].Seq != 1 {
		t.Fatalf("complete: %v %+v", err, out)
	}
	reqs, _ = db.Requests().List(ctx, "s1")
	if reqs[0].Status != RequestCompleted || reqs[0].ResponseID != "resp_1" || reqs[0].Finished.IsZero() {
		t.Fatalf("request after completion: %+v", reqs[0])
	}
	want := Usage{Input: 100, Cached: 60, Output: 20, Reasoning: 8}
	if reqs[0].Usage != want {
		t.Fatalf("usage stored %+v, want %+v", reqs[0].Usage, want)
	}
	if u, err := db.Requests().Usage(ctx, "s1"); err != nil || u != want || u.CacheHitRatio() != 0.6 {
		t.Fatalf("session usage %+v (%v), ratio %v", u, err, u.CacheHitRatio())
	}
}

// Seeing a file again unchanged writes nothing: the entry keeps the time
// it last changed. A change, or content where there was none, is written.
func TestSeenAgainUnchangedWritesNothing(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	newSession(t, db, "/src/app", "s1")
	updated := func() int64 {
		var u int64
		if err := db.wconn.QueryRowContext(context.Background(), `SELECT updated FROM read_set WHERE session_id = 's1' AND path = 'a.txt'`).Scan(&u); err != nil {
			t.Fatal(err)
		}
		return u
	}
	set := func(s Seen) {
		if err := db.Memory().SetSeen(ctx, "s1", "a.txt", s); err != nil {
			t.Fatal(err)
		}
	}
	set(Seen{Hash: "h1"})
	first := updated()
	set(Seen{Hash: "h1"})
	if updated() != first {
		t.Error("seeing the same hash again rewrote the entry")
	}
	set(Seen{Hash: "h1", Content: []byte("alpha")})
	if got, _ := db.Memory().SeenFiles(ctx, "s1"); string(got["a.txt"].Content) != "alpha" {
		t.Errorf("content for an entry that had none was not kept: %+v", got["a.txt"])
	}
	set(Seen{Hash: "h1"})
	if got, _ := db.Memory().SeenFiles(ctx, "s1"); string(got["a.txt"].Content) != "alpha" {
		t.Errorf("the same hash without content dropped the content: %+v", got["a.txt"])
	}
	set(Seen{Hash: "h2", Content: []byte("beta")})
	if got, _ := db.Memory().SeenFiles(ctx, "s1"); got["a.txt"].Hash != "h2" || string(got["a.txt"].Content) != "beta" || updated() == first {
		t.Errorf("a change was not written: %+v", got["a.txt"])
	}
}
