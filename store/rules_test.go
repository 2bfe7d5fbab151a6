package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestRules: a rule is kept per workspace, once, survives closing and
// opening the database again, and is revoked one at a time or all at once.
func TestRules(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hearth.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := db.Rules().Keep(ctx, "/w", RuleCommand, "go test")
	if err != nil {
		t.Fatal(err)
	}
	again, err := db.Rules().Keep(ctx, "/w", RuleCommand, "go test")
	if err != nil || again.ID != a.ID || !again.Created.Equal(a.Created) {
		t.Fatalf("adding the rule again = %+v, %v; first %+v", again, err, a)
	}
	if _, err := db.Rules().Keep(ctx, "/w", RulePath, "src/a.go"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Rules().Keep(ctx, "/v", RuleCommand, "make"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openAt(t, path)
	if got, err := db.Rules().Patterns(ctx, "/w", RuleCommand); err != nil || len(got) != 1 || got[0] != "go test" {
		t.Fatalf("command rules of /w after a reopen = %q, %v", got, err)
	}
	if got, _ := db.Rules().Patterns(ctx, "/w", RulePath); len(got) != 1 || got[0] != "src/a.go" {
		t.Fatalf("path rules of /w = %q", got)
	}
	if got, _ := db.Rules().Patterns(ctx, "/elsewhere", RuleCommand); len(got) != 0 {
		t.Fatalf("another workspace's rules = %q", got)
	}
	all, err := db.Rules().List(ctx)
	if err != nil || len(all) != 3 || all[0].Root != "/v" || all[1].Pattern != "go test" || all[1].Kind != RuleCommand {
		t.Fatalf("List = %+v, %v", all, err)
	}
	if err := db.Rules().Revoke(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.Rules().Revoke(ctx, a.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("revoking it again: %v", err)
	}
	if got, _ := db.Rules().Patterns(ctx, "/w", RuleCommand); len(got) != 0 {
		t.Fatalf("revoked rule still there: %q", got)
	}
	if n, err := db.Rules().RevokeAll(ctx); err != nil || n != 2 {
		t.Fatalf("RevokeAll = %d, %v", n, err)
	}
}

func openAt(t *testing.T, path string) *DB {
	t.Helper()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
