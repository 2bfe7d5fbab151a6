package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/store"
)

// asker answers permission requests with the given option ids in turn and
// keeps the requests it saw.
type asker struct {
	mu      sync.Mutex
	answers []string
	seen    []acp.RequestPermissionRequest
}

func (a *asker) onCall(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method != rpc.MethodSessionRequestPermission {
		return nil, fmt.Errorf("unexpected call %s", method)
	}
	var req acp.RequestPermissionRequest
	if err := json.Unmarshal(params, &req); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seen = append(a.seen, req)
	if len(a.answers) == 0 {
		return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeCancelled()}, nil
	}
	id := a.answers[0]
	a.answers = a.answers[1:]
	return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected(acp.PermissionOptionId(id))}, nil
}

func (a *asker) asked() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.seen)
}

const writeA = `edit sim:calls=1 sim:tool=write_file sim:args={"path":"a.txt","content":"changed\n"}`

func readA(t *testing.T, td *testDaemon) string {
	b, err := os.ReadFile(filepath.Join(td.root, "a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lastToolOutput is the function_call_output the model got last.
func lastToolOutput(t *testing.T, td *testDaemon) string {
	recs := td.sim.Received()
	for i := len(recs) - 1; i >= 0; i-- {
		for _, it := range recs[i].Input {
			var o struct {
				Type   string `json:"type"`
				Output string `json:"output"`
			}
			if json.Unmarshal(it, &o) == nil && o.Type == "function_call_output" {
				return o.Output
			}
		}
	}
	t.Fatal("no function_call_output was sent")
	return ""
}

// commandOutput is what a shell result says the command printed: what
// follows its "Output:" line.
func commandOutput(result string) string {
	if _, out, ok := strings.Cut(result, "\nOutput:\n"); ok {
		return out
	}
	return result
}

// A rejected write leaves the disk untouched and tells the model; the
// permission prompt showed the diff it would have made.
func TestPermissionRejectLeavesDiskUntouched(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	a := &asker{answers: []string{"reject_once"}}
	ed := td.connectAnswering(a.onCall)
	ed.initialize()
	id := ed.newSession(td.root)
	if stop := ed.prompt(id, writeA); stop != acp.StopReasonEndTurn {
		t.Fatalf("stop %s", stop)
	}
	if got := readA(t, td); got != "alpha\nbeta\n" {
		t.Fatalf("a.txt = %q after a rejected write", got)
	}
	if out := lastToolOutput(t, td); !strings.Contains(out, "rejected") {
		t.Errorf("the model was told %q", out)
	}
	if a.asked() != 1 {
		t.Fatalf("asked %d times", a.asked())
	}
	req := a.seen[0]
	if req.SessionId != id || len(req.Options) != 4 || req.ToolCall.Kind == nil || *req.ToolCall.Kind != acp.ToolKindEdit {
		t.Errorf("permission request %+v", req)
	}
	var diff *acp.ToolCallContentDiff
	for _, c := range req.ToolCall.Content {
		if c.Diff != nil {
			diff = c.Diff
		}
	}
	if diff == nil || diff.NewText != "changed\n" || diff.OldText == nil || *diff.OldText != "alpha\nbeta\n" || !strings.HasSuffix(diff.Path, "/a.txt") {
		t.Errorf("the prompt's diff = %+v", diff)
	}
}

// Allowed once, the write happens and the editor gets the diff; "always"
// is remembered for the session (and persisted), so the next write does not
// ask; "always reject" refuses without asking.
func TestPermissionAllowAndAlways(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	a := &asker{answers: []string{"allow_once", "allow_always"}}
	ed := td.connectAnswering(a.onCall)
	ed.initialize()
	id := ed.newSession(td.root)
	ed.prompt(id, writeA)
	if got := readA(t, td); got != "changed\n" {
		t.Fatalf("allowed write: a.txt = %q", got)
	}
	var sawDiff bool
	for _, u := range ed.updates() {
		if u.ToolCallUpdate != nil {
			for _, c := range u.ToolCallUpdate.Content {
				sawDiff = sawDiff || (c.Diff != nil && c.Diff.NewText == "changed\n")
			}
		}
	}
	if !sawDiff {
		t.Error("the completed edit did not carry its diff")
	}
	ed.prompt(id, `again sim:calls=1 sim:tool=write_file sim:args={"path":"b.txt","content":"b\n"}`)
	ed.prompt(id, `more sim:calls=1 sim:tool=write_file sim:args={"path":"c.txt","content":"c\n"}`)
	if a.asked() != 2 {
		t.Errorf("asked %d times; allow_always should have stopped the asking", a.asked())
	}
	if _, err := os.Stat(filepath.Join(td.root, "c.txt")); err != nil {
		t.Errorf("remembered allow did not write: %v", err)
	}
	perms, _ := td.d.db.Memory().Permissions(context.Background(), string(id))
	if perms["write_file"] != store.Allow {
		t.Errorf("permissions stored: %+v", perms)
	}

	b := &asker{answers: []string{"reject_always"}}
	ed2 := td.connectAnswering(b.onCall)
	ed2.initialize()
	id2 := ed2.newSession(td.root)
	ed2.prompt(id2, `x sim:calls=1 sim:tool=write_file sim:args={"path":"d.txt","content":"d\n"}`)
	ed2.prompt(id2, `y sim:calls=1 sim:tool=write_file sim:args={"path":"d.txt","content":"d\n"}`)
	if b.asked() != 1 {
		t.Errorf("asked %d times after reject_always", b.asked())
	}
	if _, err := os.Stat(filepath.Join(td.root, "d.txt")); err == nil {
		t.Error("a rejected write happened")
	}
}

// Each mode: read-only refuses without asking; full-auto runs without
// asking; auto-edit runs edits but asks before shell; set_mode is announced
// to attached editors and an unknown mode is a clear error.
func TestModes(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	a := &asker{answers: []string{"reject_once"}}
	ed := td.connectAnswering(a.onCall)
	ed.initialize()
	var ns acp.NewSessionResponse
	ed.must(rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: td.root, McpServers: []acp.McpServer{}}, &ns)
	if ns.Modes == nil || ns.Modes.CurrentModeId != ModeAsk || len(ns.Modes.AvailableModes) != 4 {
		t.Fatalf("modes offered: %+v", ns.Modes)
	}
	id := ns.SessionId
	setMode := func(m string) {
		t.Helper()
		ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: acp.SessionModeId(m)}, nil)
	}

	setMode(ModeReadOnly)
	ed.prompt(id, writeA)
	if readA(t, td) != "alpha\nbeta\n" || a.asked() != 0 || !strings.Contains(lastToolOutput(t, td), "read-only") {
		t.Errorf("read-only: a.txt %q, asked %d, output %q", readA(t, td), a.asked(), lastToolOutput(t, td))
	}

	setMode(ModeAutoEdit)
	ed.prompt(id, writeA)
	if readA(t, td) != "changed\n" || a.asked() != 0 {
		t.Errorf("auto-edit write: a.txt %q, asked %d", readA(t, td), a.asked())
	}
	ed.prompt(id, `run sim:calls=1 sim:tool=shell sim:args={"command":"touch\u0020shelled"}`)
	if a.asked() != 1 {
		t.Errorf("auto-edit shell: asked %d, want 1", a.asked())
	}
	if _, err := os.Stat(filepath.Join(td.root, "shelled")); err == nil {
		t.Error("a rejected shell command ran")
	}

	setMode(ModeFullAuto)
	ed.prompt(id, `run sim:calls=1 sim:tool=shell sim:args={"command":"touch\u0020shelled"}`)
	if _, err := os.Stat(filepath.Join(td.root, "shelled")); err != nil || a.asked() != 1 {
		t.Errorf("full-auto shell: %v, asked %d", err, a.asked())
	}

	var sawMode bool
	for _, u := range ed.updates() {
		sawMode = sawMode || (u.CurrentModeUpdate != nil && u.CurrentModeUpdate.CurrentModeId == ModeFullAuto)
	}
	if !sawMode {
		t.Error("no current_mode_update was sent")
	}
	err := ed.call(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: "yolo"}, nil)
	if err == nil || !strings.Contains(err.Error(), "modeId") {
		t.Errorf("unknown mode: %v", err)
	}
	row, _ := td.d.db.Session(context.Background(), string(id))
	if row.Mode != ModeFullAuto {
		t.Errorf("stored mode %q", row.Mode)
	}
}

// A turn cancelled while a permission question is open ends as cancelled,
// and the write never happens.
func TestCancelWhilePermissionPending(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	asked := make(chan struct{})
	ed := td.connectAnswering(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		close(asked)
		<-ctx.Done() // the user never answers
		return nil, ctx.Err()
	})
	ed.initialize()
	id := ed.newSession(td.root)
	done := make(chan acp.StopReason, 1)
	go func() { done <- ed.prompt(id, writeA) }()
	<-asked
	if err := ed.c.Notify(context.Background(), rpc.MethodSessionCancel, acp.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	if stop := <-done; stop != acp.StopReasonCancelled {
		t.Fatalf("stop %s", stop)
	}
	if readA(t, td) != "alpha\nbeta\n" {
		t.Fatal("the write happened after a cancel")
	}
}

// The editor hears of a tool call (tool_call, then in_progress) before it
// is asked to permit it, and of a mode change before set_mode's answer.
func TestPermissionAndModeOrdering(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	var ed *editor
	var before []acp.SessionUpdate
	ed = td.connectAnswering(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		before = ed.updates()
		return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected("reject_once")}, nil
	})
	ed.initialize()
	id := ed.newSession(td.root)
	ed.prompt(id, writeA)
	var started, running, diff bool
	for _, u := range before {
		started = started || (u.ToolCall != nil && u.ToolCall.Title == "write_file")
		if tu := u.ToolCallUpdate; tu != nil {
			running = running || (tu.Status != nil && *tu.Status == acp.ToolCallStatusInProgress)
			for _, c := range tu.Content {
				diff = diff || (c.Diff != nil && c.Diff.NewText == "changed\n")
			}
		}
	}
	if !started || !running || !diff {
		t.Errorf("asked before the editor saw the call: tool_call %v, in_progress %v, its diff %v", started, running, diff)
	}
	ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeAutoEdit}, nil)
	last := ed.updates()[len(ed.updates())-1]
	if last.CurrentModeUpdate == nil || last.CurrentModeUpdate.CurrentModeId != ModeAutoEdit {
		t.Errorf("set_mode answered before its current_mode_update")
	}
}
