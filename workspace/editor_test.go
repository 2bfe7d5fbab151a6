package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hearthd/hearth/workspace/watch"
)

// fakeEditor is an editor holding some files' buffers in memory; it records
// every path it was asked about. failRead/failWrite make it answer errors.
type fakeEditor struct {
	mu        sync.Mutex
	buffers   map[string]string // abs path → unsaved text
	asked     []string          // "read abs" / "write abs"
	failRead  error
	failWrite error
}

func (e *fakeEditor) ReadText(_ context.Context, abs string) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.asked = append(e.asked, "read "+abs)
	if e.failRead != nil {
		return "", e.failRead
	}
	if text, ok := e.buffers[abs]; ok {
		return text, nil
	}
	return "", errors.New("no buffer and no file")
}

func (e *fakeEditor) WriteText(_ context.Context, abs, content string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.asked = append(e.asked, "write "+abs)
	if e.failWrite != nil {
		return e.failWrite
	}
	e.buffers[abs] = content
	return nil
}

func (e *fakeEditor) calls() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.asked)
}

func (e *fakeEditor) both() Editor { return Editor{Reader: e, Writer: e} }

func runVia(t *testing.T, ts *Toolset, ed Editor, name, args string) Result {
	t.Helper()
	return ts.RunVia(context.Background(), ed, name, json.RawMessage(args))
}

// read_file through an editor returns its buffer, unsaved changes and all,
// with the buffer's hash and text for the read set; the disk is not what the
// model sees.
func TestReadFileViaEditorReturnsTheBuffer(t *testing.T) {
	r, root, _ := newTree(t)
	abs := filepath.Join(root, "a.txt")
	writeFile(t, abs, "on disk\n")
	ed := &fakeEditor{buffers: map[string]string{abs: "unsaved one\nunsaved two\n"}}
	ts := NewToolset(r)
	res := runVia(t, ts, ed.both(), "read_file", `{"path":"a.txt","offset":2}`)
	if res.IsError || res.Output != "     2\tunsaved two\n" {
		t.Fatalf("read_file via the editor = %+v", res)
	}
	if !res.Buffer || res.Content != "unsaved one\nunsaved two\n" || res.Hash != contentHash(res.Content) {
		t.Errorf("Buffer %v, Content %q, Hash %s: want the buffer's", res.Buffer, res.Content, res.Hash)
	}
	if got := ed.calls(); !slices.Equal(got, []string{"read " + abs}) {
		t.Errorf("editor asked %v", got)
	}
	// The shared Toolset is untouched: a plain Run reads the disk.
	if res := call(t, ts, "read_file", `{"path":"a.txt"}`); res.Output != "     1\ton disk\n" || res.Buffer {
		t.Errorf("Run after RunVia = %+v", res)
	}
}

// An editor that fails a read: the disk answers, and the model is told it
// may be missing the user's unsaved changes. A file on neither gets the
// disk's own message, without a note.
func TestReadFileViaEditorFallsBackToDisk(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "a.txt"), "on disk\n")
	ed := &fakeEditor{buffers: map[string]string{}, failRead: errors.New("timed out")}
	ts := NewToolset(r)
	res := runVia(t, ts, ed.both(), "read_file", `{"path":"a.txt"}`)
	if res.IsError || !strings.HasPrefix(res.Output, "     1\ton disk\n") || res.Buffer {
		t.Fatalf("fallback read = %+v", res)
	}
	if !strings.Contains(res.Output, "the editor could not give its copy of a.txt (timed out), so this is the file on disk") {
		t.Errorf("no note for the model: %q", res.Output)
	}
	res = runVia(t, ts, ed.both(), "read_file", `{"path":"missing.txt"}`)
	if !res.IsError || !strings.Contains(res.Output, `file "missing.txt" does not exist`) || strings.Contains(res.Output, "note") {
		t.Errorf("missing file = %+v", res)
	}
}

// The editor is never asked about a path outside the workspace, a
// directory or a special file: the call fails as it does on disk.
func TestEditorNotAskedOutsideTheWorkspace(t *testing.T) {
	r, root, outside := newTree(t)
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, "leak"))
	mkdir(t, filepath.Join(root, "dir"))
	ed := &fakeEditor{buffers: map[string]string{filepath.Join(outside, "secret.txt"): "buffer of a secret\n"}}
	ts := NewToolset(r)
	for _, c := range []struct{ tool, args, want string }{
		{"read_file", `{"path":"../outside/secret.txt"}`, "outside the workspace"},
		{"read_file", `{"path":` + mustJSON(t, filepath.Join(outside, "secret.txt")) + `}`, "outside the workspace"},
		{"read_file", `{"path":"leak"}`, "leads through a symlink"},
		{"read_file", `{"path":"dir"}`, "is a directory"},
		{"write_file", `{"path":"../outside/secret.txt","content":"x"}`, "outside the workspace"},
		{"edit_file", `{"path":"leak","old_string":"secret","new_string":"x"}`, "leads through a symlink"},
		{"write_file", `{"path":"dir","content":"x"}`, "is a directory"},
	} {
		res := runVia(t, ts, ed.both(), c.tool, c.args)
		if !res.IsError || !strings.Contains(res.Output, c.want) {
			t.Errorf("%s %s = %+v; want an error with %q", c.tool, c.args, res, c.want)
		}
		if _, err := ts.PreviewVia(context.Background(), ed.both(), c.tool, json.RawMessage(c.args)); err == nil && c.tool != "read_file" {
			t.Errorf("Preview of %s %s accepted it", c.tool, c.args)
		}
	}
	if got := ed.calls(); len(got) != 0 {
		t.Errorf("the editor was asked %v", got)
	}
}

// write_file and edit_file through an editor: the old text is the buffer's
// (edit_file matches what the user sees), the new text goes to the buffer,
// the disk keeps its content, OnWrite still hears of it (so the user's save
// is not reported back as a change), and the model is told the change is
// unsaved.
func TestWriteViaEditorChangesTheBuffer(t *testing.T) {
	r, root, _ := newTree(t)
	abs := filepath.Join(root, "a.txt")
	writeFile(t, abs, "on disk\n")
	ed := &fakeEditor{buffers: map[string]string{abs: "typed but unsaved\n"}}
	ts, w := recordingToolset(r)

	args := `{"path":"a.txt","old_string":"typed","new_string":"edited"}`
	pv, err := ts.PreviewVia(context.Background(), ed.both(), "edit_file", json.RawMessage(args))
	if err != nil || pv.Diff == nil || pv.Diff.Old != "typed but unsaved\n" || pv.Diff.New != "edited but unsaved\n" {
		t.Fatalf("preview = %+v, %v", pv, err)
	}
	res := runVia(t, ts, ed.both(), "edit_file", args)
	if res.IsError || !res.Buffer || !strings.Contains(res.Output, "unsaved") || !strings.Contains(res.Output, "shell commands see the file on disk") {
		t.Fatalf("edit via the editor = %+v", res)
	}
	if got := ed.buffers[abs]; got != "edited but unsaved\n" {
		t.Errorf("buffer = %q", got)
	}
	if got := readString(t, abs); got != "on disk\n" {
		t.Errorf("the disk changed: %q", got)
	}
	if res.Diff == nil || res.Diff.Old != "typed but unsaved\n" || res.Hash != contentHash("edited but unsaved\n") {
		t.Errorf("diff %+v hash %s", res.Diff, res.Hash)
	}
	if got := w.list(); !slices.Equal(got, []string{"a.txt=edited but unsaved\n"}) {
		t.Errorf("OnWrite heard %v", got)
	}
	// The disk's text does not match: edit_file refuses what only the disk has.
	res = runVia(t, ts, ed.both(), "edit_file", `{"path":"a.txt","old_string":"on disk","new_string":"x"}`)
	if !res.IsError || !strings.Contains(res.Output, "old_string not found") {
		t.Errorf("edit of the disk's text = %+v", res)
	}
}

// A new file is created on disk by hearth even with an editor (there is no
// buffer to show it in); the editor is asked nothing about it.
func TestWriteViaEditorCreatesNewFilesOnDisk(t *testing.T) {
	r, root, _ := newTree(t)
	ed := &fakeEditor{buffers: map[string]string{}}
	ts := NewToolset(r)
	res := runVia(t, ts, ed.both(), "write_file", `{"path":"sub/new.txt","content":"new\n"}`)
	if res.IsError || res.Buffer || strings.Contains(res.Output, "unsaved") {
		t.Fatalf("create = %+v", res)
	}
	if got := readString(t, filepath.Join(root, "sub", "new.txt")); got != "new\n" {
		t.Errorf("new file = %q", got)
	}
	if got := ed.calls(); len(got) != 0 {
		t.Errorf("the editor was asked %v", got)
	}
}

// An editor that fails fails the write with a message for the model, and
// the disk is untouched: a failed read (the call would clobber unsaved
// changes with the disk's text) and a failed write alike.
func TestWriteViaEditorFailureIsAToolError(t *testing.T) {
	r, root, _ := newTree(t)
	abs := filepath.Join(root, "a.txt")
	writeFile(t, abs, "on disk\n")
	ts := NewToolset(r)

	ed := &fakeEditor{buffers: map[string]string{abs: "buffer\n"}, failRead: errors.New("editor busy")}
	res := runVia(t, ts, ed.both(), "write_file", `{"path":"a.txt","content":"x\n"}`)
	if !res.IsError || !strings.Contains(res.Output, "the editor could not give its copy of the file (editor busy); nothing was changed") {
		t.Errorf("failed read = %+v", res)
	}
	if _, err := ts.PreviewVia(context.Background(), ed.both(), "write_file", json.RawMessage(`{"path":"a.txt","content":"x\n"}`)); err == nil {
		t.Error("Preview accepted a write whose buffer cannot be read")
	}

	ed = &fakeEditor{buffers: map[string]string{abs: "buffer\n"}, failWrite: errors.New("buffer is read-only")}
	res = runVia(t, ts, ed.both(), "write_file", `{"path":"a.txt","content":"x\n"}`)
	if !res.IsError || !strings.Contains(res.Output, `the editor could not apply the write to "a.txt" (buffer is read-only)`) || res.Title != "Write a.txt" {
		t.Errorf("failed write = %+v", res)
	}
	if got := readString(t, abs); got != "on disk\n" {
		t.Errorf("the disk changed: %q", got)
	}
}

// An editor that takes writes but offers no reads: the text changed is the
// disk's, and the result goes to the editor.
func TestWriteViaEditorWithoutReads(t *testing.T) {
	r, root, _ := newTree(t)
	abs := filepath.Join(root, "a.txt")
	writeFile(t, abs, "on disk\n")
	ed := &fakeEditor{buffers: map[string]string{}}
	ts := NewToolset(r)
	res := runVia(t, ts, Editor{Writer: ed}, "edit_file", `{"path":"a.txt","old_string":"disk","new_string":"buffer"}`)
	if res.IsError || !res.Buffer || ed.buffers[abs] != "on buffer\n" || readString(t, abs) != "on disk\n" {
		t.Fatalf("edit = %+v; buffer %q", res, ed.buffers[abs])
	}
	if got := ed.calls(); !slices.Equal(got, []string{"write " + abs}) {
		t.Errorf("editor asked %v", got)
	}
}

// With Creates, a new file goes to the editor too, which creates it: hearth
// creates nothing on disk, not even its directory. edit_file still refuses
// a file that does not exist.
func TestWriteViaEditorCreatesNewFilesInTheEditor(t *testing.T) {
	r, root, _ := newTree(t)
	ed := &fakeEditor{buffers: map[string]string{}}
	ts := NewToolset(r)
	via := ed.both()
	via.Creates = true
	abs := filepath.Join(root, "sub", "new.txt")
	res := runVia(t, ts, via, "write_file", `{"path":"sub/new.txt","content":"new\n"}`)
	if res.IsError || !res.Buffer || !strings.Contains(res.Output, "Created sub/new.txt") || !strings.Contains(res.Output, "editor, which creates it") {
		t.Fatalf("create = %+v", res)
	}
	if got := ed.buffers[abs]; got != "new\n" {
		t.Errorf("the editor got %q", got)
	}
	if _, err := os.Stat(filepath.Join(root, "sub")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("hearth created the directory on disk: %v", err)
	}
	if res.Diff == nil || res.Diff.Old != "" || res.Diff.New != "new\n" {
		t.Errorf("diff %+v", res.Diff)
	}
	res = runVia(t, ts, via, "edit_file", `{"path":"other.txt","old_string":"a","new_string":"b"}`)
	if !res.IsError {
		t.Errorf("edit_file of a missing file = %+v", res)
	}
	if got := ed.calls(); !slices.Equal(got, []string{"write " + abs}) {
		t.Errorf("the editor was asked %v", got)
	}
}

// A file on disk too large to read whole is read from the disk, as far as
// it is shown: the editor, which would send all of it in one message, is
// not asked. A buffer the editor does give is kept for the read set only
// while it is small.
func TestReadFileViaEditorBigFile(t *testing.T) {
	r, root, _ := newTree(t)
	abs := filepath.Join(root, "big.txt")
	writeFile(t, abs, strings.Repeat("a line on disk\n", 1000))
	if err := os.Truncate(abs, watch.ReadWholeMax+1); err != nil {
		t.Fatal(err)
	}
	mid := filepath.Join(root, "mid.txt")
	writeFile(t, mid, "on disk\n")
	ed := &fakeEditor{buffers: map[string]string{abs: "unsaved\n", mid: strings.Repeat("unsaved\n", watch.MaxContent/8+1)}}
	ts := NewToolset(r)
	res := runVia(t, ts, ed.both(), "read_file", `{"path":"big.txt","limit":1}`)
	if res.IsError || !strings.HasPrefix(res.Output, "     1\ta line on disk\n[truncated: showing lines 1-1 of a file of ") || res.Buffer {
		t.Errorf("read_file of a huge file via the editor = %+v", res)
	}
	res = runVia(t, ts, ed.both(), "read_file", `{"path":"mid.txt","limit":1}`)
	if res.IsError || res.Output == "" || !res.Buffer || res.Content != "" || res.Hash != contentHash(ed.buffers[mid]) {
		t.Errorf("read_file of a buffer over watch.MaxContent: error %v, Buffer %v, %d bytes kept, hash ok %v",
			res.IsError, res.Buffer, len(res.Content), res.Hash == contentHash(ed.buffers[mid]))
	}
	if got := ed.calls(); !slices.Equal(got, []string{"read " + mid}) {
		t.Errorf("editor asked %v, want only mid.txt", got)
	}
}

// With Creates, apply_patch's added file goes to the editor too, which
// creates it; a move's destination still goes to disk, since its source is
// then removed from disk.
func TestApplyPatchViaEditorCreates(t *testing.T) {
	r, root, _ := newTree(t)
	m := filepath.Join(root, "m.txt")
	writeFile(t, m, "move me\n")
	ed := &fakeEditor{buffers: map[string]string{m: "move me\n"}}
	via := ed.both()
	via.Creates = true
	res := runVia(t, NewToolset(r), via, "apply_patch", mustJSON(t, map[string]string{"input": "*** Begin Patch\n" +
		"*** Add File: sub/n.txt\n+new\n" +
		"*** Update File: m.txt\n*** Move to: moved.txt\n-move me\n+moved\n" +
		"*** End Patch\n"}))
	if res.IsError {
		t.Fatal(res.Output)
	}
	n := filepath.Join(root, "sub", "n.txt")
	if ed.buffers[n] != "new\n" || !res.Files[0].Buffer || !strings.Contains(res.Output, "editor, which creates them") {
		t.Errorf("the added file: editor %q, result %+v", ed.buffers[n], res)
	}
	if _, err := os.Stat(filepath.Dir(n)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("hearth created sub/ on disk: %v", err)
	}
	if readBack(t, filepath.Join(root, "moved.txt")) != "moved\n" || res.Files[1].Buffer {
		t.Error("the move's destination is not on disk")
	}
	if _, err := os.Stat(m); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the move's source is still there: %v", err)
	}
}
