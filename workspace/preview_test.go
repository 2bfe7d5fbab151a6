package workspace

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func preview(t *testing.T, ts *Toolset, name, args string) Preview {
	t.Helper()
	p, err := ts.Preview(context.Background(), name, json.RawMessage(args))
	if err != nil {
		t.Fatalf("Preview(%s, %s) = %v", name, args, err)
	}
	return p
}

func TestPreviewWriteFile(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "old.txt"), "one\ntwo\nthree\n")
	ts, w := recordingToolset(r)

	args := `{"path":"docs/new.md","content":"# Title\n\nBody\n"}`
	p := preview(t, ts, "write_file", args)
	want := Preview{
		Title:     "Write docs/new.md",
		Kind:      "edit",
		Locations: []string{"docs/new.md"},
		Diff: &FileDiff{
			Path:    "docs/new.md",
			Old:     "",
			New:     "# Title\n\nBody\n",
			Unified: "--- /dev/null\n+++ b/docs/new.md\n@@ -0,0 +1,3 @@\n+# Title\n+\n+Body\n",
		},
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("Preview = %+v\nwant %+v", p, want)
	}
	if _, err := os.Stat(filepath.Join(root, "docs")); err == nil {
		t.Error("Preview created the file's directory")
	}
	// Run does what Preview showed.
	res := call(t, ts, "write_file", args)
	if res.IsError || !reflect.DeepEqual(res.Diff, p.Diff) || res.Title != p.Title || !slices.Equal(res.Locations, p.Locations) {
		t.Errorf("Run = %+v, want the Preview's diff %+v", res, p.Diff)
	}

	p = preview(t, ts, "write_file", `{"path":"old.txt","content":"one\n2\nthree\nfour"}`)
	wantUnified := "--- a/old.txt\n+++ b/old.txt\n@@ -1,3 +1,4 @@\n one\n-two\n+2\n three\n+four\n\\ No newline at end of file\n"
	if p.Diff == nil || p.Diff.Old != "one\ntwo\nthree\n" || p.Diff.Unified != wantUnified {
		t.Errorf("Preview of an overwrite: Diff = %+v, want Unified %q", p.Diff, wantUnified)
	}
	if got := readString(t, filepath.Join(root, "old.txt")); got != "one\ntwo\nthree\n" {
		t.Errorf("Preview wrote the file: %q", got)
	}
	if got := w.list(); len(got) != 1 {
		t.Errorf("OnWrite calls = %q, want only Run's", got)
	}
}

func TestPreviewEditFile(t *testing.T) {
	r, root, _ := newTree(t)
	var lines []string
	for i := range 20 {
		lines = append(lines, "line "+string(rune('a'+i)))
	}
	content := strings.Join(lines, "\n") + "\n"
	writeFile(t, filepath.Join(root, "f.txt"), content)
	ts := NewToolset(r)

	p := preview(t, ts, "edit_file", `{"path":"f.txt","old_string":"line c\n","new_string":"line C\n"}`)
	wantUnified := "--- a/f.txt\n+++ b/f.txt\n@@ -1,6 +1,6 @@\n line a\n line b\n-line c\n+line C\n line d\n line e\n line f\n"
	if p.Title != "Edit f.txt" || p.Kind != "edit" || !slices.Equal(p.Locations, []string{"f.txt"}) || p.Command != "" {
		t.Errorf("Preview = %+v", p)
	}
	if p.Diff == nil || p.Diff.Old != content || p.Diff.New != strings.Replace(content, "line c", "line C", 1) || p.Diff.Unified != wantUnified {
		t.Errorf("Diff = %+v, want Unified %q", p.Diff, wantUnified)
	}

	// Two changes far apart make two hunks.
	p = preview(t, ts, "edit_file", `{"path":"f.txt","old_string":"line ","new_string":"L ","replace_all":true}`)
	if p.Diff == nil || strings.Count(p.Diff.Unified, "\n-line ") != 20 || strings.Count(p.Diff.Unified, "\n+L ") != 20 {
		t.Errorf("replace_all Diff = %q", p.Diff.Unified)
	}
	if got := readString(t, filepath.Join(root, "f.txt")); got != content {
		t.Error("Preview changed the file")
	}
	p = preview(t, ts, "edit_file", `{"path":"f.txt","old_string":"line b\n","new_string":""}`)
	if want := "--- a/f.txt\n+++ b/f.txt\n@@ -1,5 +1,4 @@\n line a\n-line b\n line c\n line d\n line e\n"; p.Diff.Unified != want {
		t.Errorf("deletion Diff = %q, want %q", p.Diff.Unified, want)
	}
}

func TestPreviewShell(t *testing.T) {
	r, root, _ := newTree(t)
	ts := NewToolset(r)
	command := "touch ran && echo done"
	p := preview(t, ts, "shell", mustJSON(t, map[string]any{"command": command, "timeout_ms": 5000}))
	want := Preview{Title: "Run touch ran && echo done", Kind: "execute", Command: command}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("Preview = %+v, want %+v", p, want)
	}
	if _, err := os.Stat(filepath.Join(root, "ran")); err == nil {
		t.Error("Preview ran the command")
	}
	long := "for f in *; do\n  echo $f\ndone"
	if p := preview(t, ts, "shell", mustJSON(t, map[string]string{"command": long})); p.Title != "Run for f in *; do …" || p.Command != long {
		t.Errorf("Preview of a multi-line command = %+v", p)
	}
	if got := commandTitle(strings.Repeat("é", 100)); got != "Run "+strings.Repeat("é", 80)+" …" {
		t.Errorf("commandTitle of a long line = %q", got)
	}
}

func TestPreviewReadOnly(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "src", "a.go"), "package a\n")
	ts := NewToolset(r)
	tests := []struct {
		name, args string
		want       Preview
	}{
		{"read_file", `{"path":"src/a.go","offset":2}`, Preview{Title: "Read src/a.go", Kind: "read", Locations: []string{"src/a.go"}}},
		{"list_dir", `{"path":"."}`, Preview{Title: "List ./", Kind: "read", Locations: []string{"."}}},
		{"list_dir", `{"path":"src"}`, Preview{Title: "List src/", Kind: "read", Locations: []string{"src"}}},
		{"grep", `{"pattern":"package"}`, Preview{Title: `Grep "package" in .`, Kind: "search", Locations: []string{"."}}},
		// Preview does not look at the file: Run reports it missing.
		{"read_file", `{"path":"nope.txt"}`, Preview{Title: "Read nope.txt", Kind: "read", Locations: []string{"nope.txt"}}},
	}
	for _, tt := range tests {
		if p := preview(t, ts, tt.name, tt.args); !reflect.DeepEqual(p, tt.want) {
			t.Errorf("Preview(%s, %s) = %+v, want %+v", tt.name, tt.args, p, tt.want)
		}
	}
	// Titles agree with Run's.
	for _, tt := range tests[:4] {
		if res := call(t, ts, tt.name, tt.args); res.Title != tt.want.Title {
			t.Errorf("Run(%s, %s).Title = %q, Preview says %q", tt.name, tt.args, res.Title, tt.want.Title)
		}
	}
}

func TestPreviewEveryToolHasOne(t *testing.T) {
	for _, d := range toolDefs {
		if d.preview == nil && readOnlyPreviews[d.Name] == nil {
			t.Errorf("%s has no preview", d.Name)
		}
		if d.preview == nil && !d.ReadOnly {
			t.Errorf("%s needs permission but previews like a read-only tool", d.Name)
		}
	}
}

func TestPreviewUnknownAndCancelled(t *testing.T) {
	r, _, _ := newTree(t)
	ts := NewToolset(r)
	_, err := ts.Preview(context.Background(), "rm_rf", json.RawMessage(`{}`))
	if res := call(t, ts, "rm_rf", `{}`); err == nil || err.Error() != res.Output {
		t.Errorf("Preview(rm_rf) = %v, want %q", err, res.Output)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tool := range ts.Tools() {
		if _, err := ts.Preview(ctx, tool.Name, json.RawMessage(`{"path":"a.txt","content":"x"}`)); err == nil || !strings.Contains(err.Error(), "cancelled") {
			t.Errorf("Preview(%s) with a cancelled context = %v", tool.Name, err)
		}
	}
}
