package store

import (
	"context"
	"errors"
	"testing"
)

func TestSeenAndPermissions(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	newSession(t, db, "/w", "s1")
	newSession(t, db, "/w", "s2")
	if err := db.SetSeen(ctx, "s1", "a.txt", Seen{Hash: "h1", Content: []byte("one\n")}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetSeen(ctx, "s1", "a.txt", Seen{Hash: "h2", Content: []byte("two\n")}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetSeen(ctx, "s1", "big.bin", Seen{Hash: "h3"}); err != nil {
		t.Fatal(err)
	}
	got, err := db.SeenFiles(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["a.txt"].Hash != "h2" || string(got["a.txt"].Content) != "two\n" || got["big.bin"].Content != nil {
		t.Fatalf("seen = %+v", got)
	}
	if other, _ := db.SeenFiles(ctx, "s2"); len(other) != 0 {
		t.Fatalf("s2 sees s1's files: %+v", other)
	}
	if rs, _ := db.ReadSet(ctx, "s1"); rs["a.txt"] != "h2" {
		t.Fatalf("ReadSet disagrees: %+v", rs)
	}
	if err := db.ForgetSeen(ctx, "s1", "big.bin"); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.SeenFiles(ctx, "s1"); len(got) != 1 {
		t.Fatalf("after ForgetSeen: %+v", got)
	}
	if err := db.SetSeen(ctx, "nope", "x", Seen{Hash: "h"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}

	if err := db.SetPermission(ctx, "s1", "shell", Allow); err != nil {
		t.Fatal(err)
	}
	if err := db.SetPermission(ctx, "s1", "shell", Reject); err != nil {
		t.Fatal(err)
	}
	if err := db.SetPermission(ctx, "s1", "write_file", Allow); err != nil {
		t.Fatal(err)
	}
	p, err := db.Permissions(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 2 || p["shell"] != Reject || p["write_file"] != Allow {
		t.Fatalf("permissions = %+v", p)
	}
	if err := db.SetPermission(ctx, "s1", "shell", Decision("maybe")); err == nil {
		t.Fatal("a decision outside allow/reject was stored")
	}
}
