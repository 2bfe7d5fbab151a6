package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The checkpoint hook hears each file change before it is made, with the
// file's pre-image, and a hook that fails refuses the write; Restorer.File
// puts a file back only while it holds what the turn left.
func TestCheckpointHookAndRestore(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "a.txt"), "a\n")
	os.Chmod(filepath.Join(root, "a.txt"), 0o640)
	ctx := context.Background()
	var got []Change
	ts := NewToolset(r).In("")
	ts.Checkpoint = func(_ context.Context, c Change) error {
		if b, _ := os.ReadFile(filepath.Join(root, c.Rel)); c.Existed && string(b) != c.Old {
			t.Errorf("%s changed before the hook heard of it", c.Rel)
		}
		got = append(got, c)
		return nil
	}
	res := ts.Run(ctx, "apply_patch", json.RawMessage(`{"input":"*** Begin Patch\n*** Delete File: a.txt\n*** Add File: b.txt\n+b\n*** End Patch\n"}`))
	if res.IsError || len(got) != 2 || got[0].Rel != "b.txt" || got[0].Existed || *got[0].New != "b\n" ||
		got[1].Rel != "a.txt" || !got[1].Existed || got[1].Old != "a\n" || got[1].Mode != 0o640 || got[1].New != nil {
		t.Fatalf("apply_patch: %s; the hook heard %+v", res.Output, got)
	}

	failing := NewToolset(r).In("")
	failing.Checkpoint = func(context.Context, Change) error { return errors.New("disk full") }
	res = failing.Run(ctx, "write_file", json.RawMessage(`{"path":"b.txt","content":"lost\n"}`))
	if b, _ := os.ReadFile(filepath.Join(root, "b.txt")); !res.IsError || !strings.Contains(res.Output, "disk full") || string(b) != "b\n" {
		t.Fatalf("a failing hook: %q, b.txt %q", res.Output, b)
	}

	old := "a\n"
	if err := (Restorer{Tools: ts}).File(ctx, "a.txt", "", &old, 0o640); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(root, "a.txt")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("a.txt restored: %v, %v", fi, err)
	}
	if err := (Restorer{Tools: ts}).File(ctx, "b.txt", contentHash("other\n"), nil, 0); !errors.Is(err, ErrRestoreConflict) {
		t.Errorf("restoring a file changed since: %v", err)
	}
	if err := (Restorer{Tools: ts}).File(ctx, "b.txt", contentHash("b\n"), nil, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "b.txt")); !os.IsNotExist(err) {
		t.Errorf("b.txt not removed: %v", err)
	}
}
