package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearthd/hearth/store/storetest"
)

// A file that is not a database: Open says so, names the file and gives
// the command that moves it (and its companions) aside — a command a
// shell runs as written, even for a path with a space and a quote.
func TestOpenCorruptSaysMoveItAside(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "it's data")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "hearth.db")
	if err := os.WriteFile(path, bytes.Repeat([]byte("not a database "), 400), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path)
	var ce *CorruptError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) {
		t.Fatalf("Open of garbage: %v, want a *CorruptError", err)
	}
	msg := err.Error()
	for _, want := range []string{path + " is damaged (file is not a database)", "move it aside: mv '", "starts a new, empty database"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q: %s", want, msg)
		}
	}
	if out, err := exec.Command("/bin/sh", "-c", ce.MoveAside()).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v %s", ce.MoveAside(), err, out)
	}
	if _, err := os.Stat(path + ".corrupt"); err != nil {
		t.Errorf("after the advice: %v", err)
	}
	db, err := Open(path)
	if err != nil {
		t.Fatalf("Open after moving the file aside: %v", err)
	}
	db.Close()
}

// The -wal and -shm companions move with the database, keeping SQLite's
// naming (NAME-wal beside NAME).
func TestMoveAsideCompanions(t *testing.T) {
	e := &CorruptError{Path: "/d/hearth.db", Companions: []string{"/d/hearth.db-wal", "/d/hearth.db-shm"}}
	want := "mv /d/hearth.db /d/hearth.db.corrupt && mv /d/hearth.db-wal /d/hearth.db.corrupt-wal && mv /d/hearth.db-shm /d/hearth.db.corrupt-shm"
	if got := e.MoveAside(); got != want {
		t.Errorf("MoveAside() = %s, want %s", got, want)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/home/ada/.local/share/hearth/hearth.db": "/home/ada/.local/share/hearth/hearth.db",
		"/a b/c":   "'/a b/c'",
		"/it's":    `'/it'\''s'`,
		"/x;rm -r": "'/x;rm -r'",
		"":         "''",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// A database damaged in a table's pages still opens; QuickCheck finds it
// and says which file and how to move it aside, and a read that meets the
// damage is a store failure with the same advice.
func TestQuickCheckFindsDamage(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hearth.db")
	db := mustOpen(t, path)
	if err := db.QuickCheck(ctx); err != nil {
		t.Fatalf("QuickCheck of a sound database: %v", err)
	}
	newSession(t, db, "/src/app", "s1")
	if _, err := db.Items().Append(ctx, "s1", 0, []NewItem{{Origin: OriginInput, Data: []byte(`{"type":"message"}`)}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	storetest.Damage(t, path, "items")

	db, err := Open(path)
	if err != nil {
		t.Fatalf("Open of a database damaged in one table: %v (want it to open)", err)
	}
	defer db.Close()
	err = db.QuickCheck(ctx)
	var ce *CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) || ce.Path != path || !strings.Contains(err.Error(), "move it aside: mv "+path+" "+path+".corrupt") {
		t.Fatalf("QuickCheck of a damaged database: %v; want a *CorruptError naming %s and the fix", err, path)
	}

	_, err = db.Items().List(ctx, "s1")
	if err == nil || !IsFailure(err) {
		t.Fatalf("reading the damaged table: %v; want a store failure", err)
	}
	if a := Advice(path, err); !strings.Contains(a, path+" is damaged") || !strings.Contains(a, "mv "+path+" "+path+".corrupt") {
		t.Errorf("Advice = %q", a)
	}
	if IsFailure(ErrNotFound) || IsFailure(context.Canceled) {
		t.Error("a caller's mistake or a cancel taken for the database failing")
	}
}

// QuickCheck stops when its context ends: a check cut short says so and
// is not taken for damage.
func TestQuickCheckBounded(t *testing.T) {
	db := openTest(t)
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	err := db.QuickCheck(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("QuickCheck past its deadline: %v; want it cut short, not damage", err)
	}
}
