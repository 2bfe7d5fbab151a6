package store

import (
	"context"
	"io/fs"
	"path"
	"path/filepath"
	"testing"
	"testing/fstest"
)

// A session keeps the directory it was opened in (its cwd, below its
// workspace's root), and session lists filter by it.
func TestSessionCwd(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	if err := db.CreateSession(ctx, Session{ID: "a", Root: "/repo", Cwd: "/repo/sub/dir"}); err != nil {
		t.Fatal(err)
	}
	newSession(t, db, "/repo", "b") // no Cwd: the root
	for id, want := range map[string]string{"a": "/repo/sub/dir", "b": "/repo"} {
		s, err := db.Session(ctx, id)
		if err != nil || s.Cwd != want || s.Root != "/repo" {
			t.Errorf("session %s: cwd %q root %q (%v), want cwd %s", id, s.Cwd, s.Root, err, want)
		}
	}
	for cwd, want := range map[string]string{"/repo/sub/dir": "a", "/repo": "b"} {
		list, err := db.Sessions(ctx, cwd, 0)
		if err != nil || len(list) != 1 || list[0].ID != want || list[0].Cwd != cwd {
			t.Errorf("sessions in %s: %+v, %v; want %s", cwd, list, err, want)
		}
	}
}

// Sessions stored before the cwd column were opened at their workspace's
// root: the migration says so.
func TestMigrationGivesOldSessionsTheirRoot(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "hearth.db")
	raw := rawDB(t, file)
	before := fstest.MapFS{}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if path.Base(name) < "0008" {
			b, err := fs.ReadFile(migrations, name)
			if err != nil {
				t.Fatal(err)
			}
			before[name] = &fstest.MapFile{Data: b}
		}
	}
	if err := migrate(ctx, raw, before); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO workspaces (id, root, created) VALUES (1, '/old/root', 0);
		INSERT INTO sessions (id, workspace_id, created, updated) VALUES ('old', 1, 0, 0)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	db, err := Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := db.Session(ctx, "old")
	if err != nil || s.Cwd != "/old/root" {
		t.Errorf("an old session's cwd: %q, %v; want its root", s.Cwd, err)
	}
}
