package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// bufferEditor is a fake editor that serves fs/read_text_file and
// fs/write_text_file from in-memory buffers (what the user sees, unsaved) and
// allows every permission request once; it records what it was asked.
type bufferEditor struct {
	*editor
	mu        sync.Mutex
	buffers   map[string]string // absolute path → text; a missing one is read from disk, as an editor does
	calls     []string          // "fs/read_text_file <path>", "fs/write_text_file <path>", "session/request_permission"
	sessions  []acp.SessionId   // the sessionId of each fs call
	failRead  string            // non-empty: fs/read_text_file answers this error
	failWrite string            // non-empty: fs/write_text_file answers this error
	denyWrite string            // non-empty: fs/write_text_file is refused as acpx refuses it (the TS SDK's internal error, these details)
	hang      chan struct{}     // non-nil: fs calls wait for it to close (or their ctx)
}

// connectBuffers connects a bufferEditor advertising the given fs halves.
func (td *testDaemon) connectBuffers(read, write bool) *bufferEditor {
	return td.connectBuffersAs("", read, write)
}

// connectBuffersAs is connectBuffers for a client that names itself
// (InitializeRequest.clientInfo) when name is not "".
func (td *testDaemon) connectBuffersAs(name string, read, write bool) *bufferEditor {
	td.t.Helper()
	b := &bufferEditor{buffers: map[string]string{}}
	b.editor = td.connectAnswering(b.onCall)
	req := acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber,
		ClientCapabilities: acp.ClientCapabilities{Fs: acp.FileSystemCapabilities{ReadTextFile: read, WriteTextFile: write}}}
	if name != "" {
		req.ClientInfo = &acp.Implementation{Name: name, Version: "1"}
	}
	var r acp.InitializeResponse
	b.must(rpc.MethodInitialize, req, &r)
	return b
}

func (b *bufferEditor) onCall(ctx context.Context, method string, params json.RawMessage) (any, error) {
	b.mu.Lock()
	hang := b.hang
	b.mu.Unlock()
	switch method {
	case rpc.MethodSessionRequestPermission:
		b.record(method, "")
		return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected("allow_once")}, nil
	case rpc.MethodFsReadTextFile:
		var req acp.ReadTextFileRequest
		if err := json.Unmarshal(params, &req); err != nil {
			return nil, err
		}
		b.record(method+" "+req.Path, req.SessionId)
		if hang != nil {
			select {
			case <-hang:
			case <-ctx.Done():
			}
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.failRead != "" {
			return nil, &jsonrpc2.Error{Code: jsonrpc2.InternalError, Message: b.failRead}
		}
		if text, ok := b.buffers[req.Path]; ok {
			return acp.ReadTextFileResponse{Content: text}, nil
		}
		disk, err := os.ReadFile(req.Path)
		if err != nil {
			return nil, &jsonrpc2.Error{Code: jsonrpc2.InternalError, Message: err.Error()}
		}
		return acp.ReadTextFileResponse{Content: string(disk)}, nil
	case rpc.MethodFsWriteTextFile:
		var req acp.WriteTextFileRequest
		if err := json.Unmarshal(params, &req); err != nil {
			return nil, err
		}
		b.record(method+" "+req.Path, req.SessionId)
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.failWrite != "" {
			return nil, &jsonrpc2.Error{Code: jsonrpc2.InternalError, Message: b.failWrite}
		}
		if b.denyWrite != "" {
			data, _ := json.Marshal(map[string]string{"details": b.denyWrite})
			return nil, &jsonrpc2.Error{Code: jsonrpc2.InternalError, Message: "Internal error", Data: data}
		}
		b.buffers[req.Path] = req.Content
		return acp.WriteTextFileResponse{}, nil
	}
	return nil, fmt.Errorf("unexpected call %s", method)
}

func (b *bufferEditor) record(call string, session acp.SessionId) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, call)
	if session != "" {
		b.sessions = append(b.sessions, session)
	}
}

func (b *bufferEditor) asked() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.calls)
}

func (b *bufferEditor) buffer(path string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	text, ok := b.buffers[path]
	return text, ok
}

func (b *bufferEditor) setBuffer(path, text string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buffers[path] = text
}

const readADirective = `r sim:calls=1 sim:tool=read_file sim:args={"path":"a.txt"}`

// A buffer modified but unsaved is what the model's read_file returns; the
// editor is asked by absolute path for this session. When the user then saves
// something else, the next prompt's delta diffs from the buffer the model saw.
func TestReadFileViaEditor(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connectBuffers(true, true)
	id := ed.newSession(td.root)
	a := filepath.Join(td.root, "a.txt")
	ed.setBuffer(a, "alpha\nunsaved\n")
	ed.prompt(id, readADirective)
	if out := lastToolOutput(t, td); !strings.Contains(out, "2\tunsaved") || strings.Contains(out, "beta") {
		t.Fatalf("read_file returned %q; want the unsaved buffer", out)
	}
	if got := ed.asked(); !slices.Equal(got, []string{"fs/read_text_file " + a}) {
		t.Errorf("editor asked %q", got)
	}
	ed.mu.Lock()
	sessions := slices.Clone(ed.sessions)
	ed.mu.Unlock()
	if len(sessions) != 1 || sessions[0] != id {
		t.Errorf("fs/read_text_file for sessions %q, want %q", sessions, id)
	}

	n := len(td.waitRequests(2))
	os.WriteFile(a, []byte("alpha\nunsaved\nmore\n"), 0o644) // the user saves, with one more line
	ed.prompt(id, "what changed?")
	texts := inputTexts(td.waitRequests(n + 1)[n])
	if len(texts) != 2 || !strings.Contains(texts[0], "+more") || strings.Contains(texts[0], "beta") {
		t.Fatalf("delta after the save = %q; want the diff from the buffer the model read", texts)
	}
}

// An edit by the model lands in the editor's buffer, unsaved: the disk is
// untouched, the permission flow is unchanged (ask mode asks first), the
// edit is matched against the buffer, the model is told the change is
// unsaved, and when the user saves it the next prompt carries no "changed on
// disk" delta.
func TestWriteViaEditor(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connectBuffers(true, true)
	id := ed.newSession(td.root)
	a := filepath.Join(td.root, "a.txt")
	ed.setBuffer(a, "alpha\nunsaved beta\n")
	ed.prompt(id, `e sim:calls=1 sim:tool=edit_file sim:args={"path":"a.txt","old_string":"unsaved","new_string":"edited"}`)
	out := lastToolOutput(t, td)
	if !strings.Contains(out, "Replaced 1 occurrence") || !strings.Contains(out, "unsaved") {
		t.Fatalf("edit_file returned %q", out)
	}
	if got, _ := ed.buffer(a); got != "alpha\nedited beta\n" {
		t.Errorf("buffer = %q", got)
	}
	if got := readA(t, td); got != "alpha\nbeta\n" {
		t.Errorf("the disk changed to %q", got)
	}
	want := []string{"fs/read_text_file " + a, rpc.MethodSessionRequestPermission, "fs/read_text_file " + a, "fs/write_text_file " + a}
	if got := ed.asked(); !slices.Equal(got, want) {
		t.Errorf("editor asked %q, want %q (preview, permission, run)", got, want)
	}
	var diff *acp.ToolCallContentDiff
	for _, u := range ed.updates() {
		if u.ToolCallUpdate != nil {
			for _, c := range u.ToolCallUpdate.Content {
				if c.Diff != nil {
					diff = c.Diff
				}
			}
		}
	}
	if diff == nil || diff.OldText == nil || *diff.OldText != "alpha\nunsaved beta\n" || diff.NewText != "alpha\nedited beta\n" {
		t.Errorf("the editor was shown the diff %+v", diff)
	}

	n := len(td.waitRequests(2))
	os.WriteFile(a, []byte("alpha\nedited beta\n"), 0o644) // the user saves the buffer
	ed.prompt(id, "anything new?")
	if texts := inputTexts(td.waitRequests(n + 1)[n]); len(texts) != 1 {
		t.Fatalf("the user's save of the model's edit came back as a change: %q", texts)
	}
}

// An editor that does not advertise the fs capabilities is never asked: the
// tools read and write the disk, as before.
func TestEditorWithoutFsCapabilityUsesDisk(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connectBuffers(false, false)
	id := ed.newSession(td.root)
	a := filepath.Join(td.root, "a.txt")
	ed.setBuffer(a, "a buffer nobody asks about\n")
	ed.prompt(id, readADirective)
	if out := lastToolOutput(t, td); !strings.Contains(out, "2\tbeta") {
		t.Fatalf("read_file returned %q; want the disk", out)
	}
	ed.prompt(id, writeA)
	if got := readA(t, td); got != "changed\n" {
		t.Errorf("a.txt = %q; want the write on disk", got)
	}
	if got := ed.asked(); !slices.Equal(got, []string{rpc.MethodSessionRequestPermission}) {
		t.Errorf("editor asked %q; want only the permission", got)
	}
}

// Paths outside the workspace are refused before the editor is asked, for
// reads and writes, relative or absolute.
func TestEditorNotAskedOutsideWorkspace(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connectBuffers(true, true)
	id := ed.newSession(td.root)
	outside := filepath.Join(filepath.Dir(td.root), "outside.txt")
	os.WriteFile(outside, []byte("secret\n"), 0o644)
	ed.setBuffer(outside, "secret buffer\n")
	for _, args := range []string{
		`sim:tool=read_file sim:args={"path":"../outside.txt"}`,
		`sim:tool=read_file sim:args={"path":"` + outside + `"}`,
		`sim:tool=write_file sim:args={"path":"../outside.txt","content":"x"}`,
		`sim:tool=edit_file sim:args={"path":"` + outside + `","old_string":"secret","new_string":"x"}`,
	} {
		ed.prompt(id, "o sim:calls=1 "+args)
		if out := lastToolOutput(t, td); !strings.Contains(out, "outside the workspace") {
			t.Errorf("%s: the model got %q", args, out)
		}
	}
	if got := ed.asked(); len(got) != 0 {
		t.Errorf("editor asked %q", got)
	}
	if b, _ := os.ReadFile(outside); string(b) != "secret\n" {
		t.Errorf("outside.txt = %q", b)
	}
}

// An editor that fails: a write is a clear tool error naming the editor's
// answer, the disk untouched; a read falls back to the disk with a note; a
// read the editor never answers falls back once editorCallTimeout passes.
func TestEditorErrorIsToolError(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connectBuffers(true, true)
	id := ed.newSession(td.root)
	ed.must("session/set_mode", map[string]any{"sessionId": id, "modeId": ModeAutoEdit}, nil)

	ed.mu.Lock()
	ed.failWrite = "buffer is read-only"
	ed.mu.Unlock()
	ed.prompt(id, writeA)
	out := lastToolOutput(t, td)
	if !strings.Contains(out, `the editor could not apply the write to "a.txt"`) || !strings.Contains(out, "buffer is read-only") {
		t.Errorf("failed write told the model %q", out)
	}
	if got := readA(t, td); got != "alpha\nbeta\n" {
		t.Errorf("a.txt = %q after a failed write", got)
	}
	var failed bool
	for _, u := range ed.updates() {
		failed = failed || (u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == acp.ToolCallStatusFailed)
	}
	if !failed {
		t.Error("the editor was not shown the call as failed")
	}

	// A client that refuses the write (acpx in a mode that denies it) is
	// reported as a refusal, in its words, and not as an error to retry.
	ed.mu.Lock()
	ed.failWrite, ed.denyWrite = "", "Permission denied for fs/write_text_file"
	ed.mu.Unlock()
	ed.prompt(id, writeA)
	out = lastToolOutput(t, td)
	if !strings.Contains(out, `the user's editor refused to write "a.txt"`) || !strings.Contains(out, "Permission denied for fs/write_text_file") ||
		!strings.Contains(out, "do not try it again") || strings.Contains(out, "Internal error") {
		t.Errorf("refused write told the model %q", out)
	}
	ed.mu.Lock()
	ed.denyWrite = ""
	ed.failRead = "no such buffer"
	ed.mu.Unlock()
	ed.prompt(id, readADirective)
	out = lastToolOutput(t, td)
	if !strings.Contains(out, "2\tbeta") || !strings.Contains(out, "the editor could not give its copy of a.txt") || !strings.Contains(out, "no such buffer") {
		t.Errorf("failed read told the model %q", out)
	}

	defer func(old time.Duration) { editorCallTimeout = old }(editorCallTimeout)
	editorCallTimeout = 300 * time.Millisecond
	hang := make(chan struct{})
	defer close(hang)
	ed.mu.Lock()
	ed.failRead, ed.hang = "", hang
	ed.mu.Unlock()
	ed.prompt(id, readADirective)
	out = lastToolOutput(t, td)
	if !strings.Contains(out, "2\tbeta") || !strings.Contains(out, "did not answer within 300ms") {
		t.Errorf("unanswered read told the model %q", out)
	}
}

// acpx asks its user before every fs/write_text_file: an edit it is handed
// whole is not asked about first by hearth too (one question for one
// change); a command still is, and so is an edit another client makes.
func TestClientThatAsksOnWriteIsAskedOnce(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connectBuffersAs("acpx", true, true)
	id := ed.newSession(td.root)
	a := filepath.Join(td.root, "a.txt")
	ed.prompt(id, `e sim:calls=1 sim:tool=edit_file sim:args={"path":"a.txt","old_string":"beta","new_string":"BETA"}`)
	if got, _ := ed.buffer(a); got != "alpha\nBETA\n" {
		t.Errorf("buffer = %q", got)
	}
	if got := ed.asked(); slices.Contains(got, rpc.MethodSessionRequestPermission) || !slices.Contains(got, "fs/write_text_file "+a) {
		t.Errorf("acpx was asked %q: want the write, and no permission request before it", got)
	}
	n := len(ed.asked())
	ed.prompt(id, `run sim:calls=1 sim:tool=shell sim:args={"command":"touch\u0020made"}`) // a command that writes: one that only reads asks nobody
	if got := ed.asked()[n:]; !slices.Contains(got, rpc.MethodSessionRequestPermission) {
		t.Errorf("a command was not asked about: %q", got)
	}

	other := td.connectBuffers(true, true)
	id2 := other.newSession(td.root)
	other.prompt(id2, `e sim:calls=1 sim:tool=edit_file sim:args={"path":"a.txt","old_string":"beta","new_string":"B"}`)
	if got := other.asked(); !slices.Contains(got, rpc.MethodSessionRequestPermission) {
		t.Errorf("a client that does not ask on write was not asked: %q", got)
	}
}

// The editor asked is the one that sent the prompt: another editor attached
// to the same session, with the capabilities, is not asked.
func TestEditorAskedIsThePrompter(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	owner := td.connectBuffers(true, true)
	id := owner.newSession(td.root)
	other := td.connectBuffers(true, true)
	var r acp.LoadSessionResponse
	other.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, &r)
	a := filepath.Join(td.root, "a.txt")
	owner.setBuffer(a, "owner's buffer\n")
	other.setBuffer(a, "other's buffer\n")
	other.prompt(id, readADirective)
	if out := lastToolOutput(t, td); !strings.Contains(out, "other's buffer") {
		t.Errorf("read_file returned %q; want the prompting editor's buffer", out)
	}
	if got := owner.asked(); len(got) != 0 {
		t.Errorf("the editor that did not prompt was asked %q", got)
	}
}

// A new file the model writes goes to the editor with fs/write_text_file
// (ACP: the client creates a missing file), so the user sees it with the
// other changes; hearth creates nothing on disk.
func TestNewFileViaEditor(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connectBuffers(true, true)
	id := ed.newSession(td.root)
	ed.prompt(id, `w sim:calls=1 sim:tool=write_file sim:args={"path":"notes/new.txt","content":"fresh\n"}`)
	abs := filepath.Join(td.root, "notes", "new.txt")
	if got, ok := ed.buffer(abs); !ok || got != "fresh\n" {
		t.Fatalf("the editor got %q (%v)", got, ok)
	}
	if _, err := os.Stat(filepath.Join(td.root, "notes")); err == nil {
		t.Error("hearth created notes/ on disk")
	}
	if got := ed.asked(); !slices.Contains(got, "fs/write_text_file "+abs) {
		t.Errorf("editor asked %q", got)
	}
	if out := lastToolOutput(t, td); !strings.Contains(out, "Created notes/new.txt") {
		t.Errorf("write_file returned %q", out)
	}
}
