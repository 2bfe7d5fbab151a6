package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/store"
)

// A session with no editor and no turn closes once idle: its conversation
// is gone (no more re-warms when its connection ends), the workspace closes
// after it, status counts both, and a prompt later opens it again from the
// store as if nothing happened.
func TestIdleSessionsAndWorkspacesClose(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	a := td.connect()
	a.initialize()
	id := a.newSession(td.root)
	a.prompt(id, "hello")
	n := len(td.waitRequests(2))

	// Attached: never idle, however long ago it was used.
	if s, w := td.d.reaper.reap(time.Now().Add(time.Hour)); s != 0 || w != 0 {
		t.Fatalf("reaped %d sessions, %d workspaces while an editor was attached", s, w)
	}
	a.c.Close()
	td.waitDetached(1)
	if s, _ := td.d.reaper.reap(time.Now()); s != 0 {
		t.Fatal("a session was reaped before its idle time")
	}
	if s, w := td.d.reaper.reap(time.Now().Add(DefaultSessionIdle)); s != 1 || w != 0 {
		t.Fatalf("after the idle time: reaped %d sessions, %d workspaces; want the session only", s, w)
	}
	st := td.d.Status()
	if st.Sessions.Open != 0 || st.Sessions.Closed != 1 || len(st.Workspaces) != 1 {
		t.Errorf("status after the session closed: %+v, %d workspaces", st.Sessions, len(st.Workspaces))
	}
	if _, w := td.d.reaper.reap(time.Now().Add(DefaultSessionIdle + DefaultWorkspaceIdle)); w != 1 {
		t.Fatalf("the empty workspace was not closed")
	}
	if st := td.d.Status(); len(st.Workspaces) != 0 || st.Sessions.WorkspacesClosed != 1 {
		t.Errorf("status after the workspace closed: %+v", st)
	}
	// Its connection is closed, and nothing re-warms the closed session.
	if got := len(td.sim.Received()); got != n {
		t.Errorf("%d requests after closing, want %d: a closed session was re-warmed", got, n)
	}

	// A prompt opens it again and it remembers the conversation.
	b := td.connect()
	b.initialize()
	if stop := b.prompt(id, "again"); stop != acp.StopReasonEndTurn {
		t.Fatalf("prompt after close: %s", stop)
	}
	recs := td.waitRequests(n + 2)
	if g := recs[n].Generate; g == nil || *g || len(recs[n].Input) != 6 {
		t.Errorf("reopening re-warmed %d items, want the guidance, the permissions, the environment and the 3 of the first turn", len(recs[n].Input))
	}
}

// / and the home directory are refused as workspaces, and so are hearth's
// own directories (configuration, data, socket), the user's credential
// directories and the system's, with what is inside them where that holds
// secrets, and any directory that holds one: each with the reason. A
// project beside them, and one in the temp dir, open.
func TestTooBroadWorkspacesRefused(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	mk := func(p string) string {
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := filepath.Dir(td.cfg.DataDir) // holds the data, the socket's directory and the workspace
	refused := map[string]string{
		"/":  "it is the filesystem root",
		home: "it is your home directory",
		mk(filepath.Join(home, ".config", "hearth")): "it is hearth's configuration directory",
		filepath.Join(home, ".config"):               "it holds hearth's configuration directory",
		td.cfg.DataDir:                               "it is hearth's data directory",
		mk(filepath.Join(td.cfg.DataDir, "x")):       "it is inside hearth's data directory",
		base:                                         "it holds hearth's data directory",
		filepath.Dir(td.cfg.Socket):                  "it is the directory of hearth's socket",
		mk(filepath.Join(home, ".ssh", "keys")):      "it is inside your credentials (",
		filepath.Join(home, ".ssh"):                  "it is your credentials (",
		mk(filepath.Join(home, ".aws")):              "it is your credentials (",
		"/etc":                                       "it is a system directory",
		"/proc":                                      "it is a system directory",
		"/proc/self":                                 "it is inside a system directory",
		"/dev":                                       "it is a system directory",
		"/tmp":                                       "it is the temp directory",
	}
	for dir, why := range refused {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := ed.c.Call(ctx, rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: dir, McpServers: []acp.McpServer{}}, &acp.NewSessionResponse{})
		cancel()
		if err == nil || !strings.Contains(err.Error(), "refusing to open") || !strings.Contains(err.Error(), why) ||
			!strings.Contains(err.Error(), "open a project directory") {
			t.Errorf("session/new in %s: %v; want it refused: %s", dir, err, why)
		}
	}
	for _, dir := range []string{td.root, mk(filepath.Join(t.TempDir(), "project")), mk(filepath.Join(home, "src", "project"))} {
		ed.newSession(dir)
	}
}

// Concurrent opens of one stored session open it once: the repair of a
// tool call the previous daemon never answered is committed once.
func TestConcurrentOpensRepairOnce(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ctx := context.Background()
	call := json.RawMessage(`{"type":"function_call","call_id":"call_1","name":"read_file","arguments":"{}"}`)
	const n = 20
	for i := range n {
		id := fmt.Sprintf("s%d", i)
		if err := td.d.db.CreateSession(ctx, store.Session{ID: id, Root: td.root}); err != nil {
			t.Fatal(err)
		}
		if _, err := td.d.db.Items().Append(ctx, id, 0, []store.NewItem{{Origin: store.OriginOutput, Data: call}}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for i := range n {
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := td.d.lookup(ctx, fmt.Sprintf("s%d", i)); err != nil {
					t.Error(err)
				}
			}()
		}
	}
	wg.Wait()
	for i := range n {
		items, err := td.d.db.Items().List(ctx, fmt.Sprintf("s%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != 2 {
			t.Errorf("session s%d has %d items after two concurrent opens, want the call and one repair", i, len(items))
		}
	}
}

// 50 sessions in 10 workspaces, each with a turn of a 3,000-word answer,
// then left: once idle they are closed, the heap is back near where it
// started, and nothing is re-warmed afterwards. The figures go to
// docs/BENCHMARKS.md (go test -v -run TestFiftyIdleSessions ./daemon/).
func TestFiftyIdleSessions(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	// A first session, closed, so that what the daemon keeps for good
	// (database pools, compiled patterns) is in the baseline.
	first := td.connect()
	first.initialize()
	first.prompt(first.newSession(td.root), "sim:tokens=3000")
	first.c.Close()
	td.waitDetached(1)
	td.d.reaper.reap(time.Now().Add(DefaultSessionIdle))
	td.d.reaper.reap(time.Now().Add(DefaultSessionIdle + DefaultWorkspaceIdle))
	first.forget()
	n0 := len(td.sim.Received())
	base := heap()

	ed := td.connect()
	ed.initialize()
	var ids []acp.SessionId
	for w := range 10 {
		dir := filepath.Join(td.root, fmt.Sprintf("w%d", w))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for range 5 {
			id := ed.newSession(dir)
			ed.prompt(id, "sim:tokens=3000")
			ids = append(ids, id)
		}
	}
	ed.forget() // the test editor's own copy of the answers is not the daemon's
	open := heap()
	ed.c.Close()
	td.waitDetached(len(ids))
	n := len(td.sim.Received())
	s, _ := td.d.reaper.reap(time.Now().Add(DefaultSessionIdle))
	_, w := td.d.reaper.reap(time.Now().Add(DefaultSessionIdle + DefaultWorkspaceIdle))
	closed := heap()
	// The simulator runs in this process and keeps a record of every
	// request (the raw frame and its parsed input): not the daemon's.
	var records uint64
	for _, r := range td.sim.Received()[n0:] {
		records += uint64(len(r.Raw))
		for _, it := range r.Input {
			records += uint64(len(it))
		}
	}
	t.Logf("heap: %d KiB at start, %d KiB with 50 open sessions, %d KiB after they closed (of which the simulator's records of requests: %d KiB); reaped %d sessions, %d workspaces",
		base>>10, open>>10, closed>>10, records>>10, s, w)
	if s != len(ids) || w != 10 {
		t.Fatalf("reaped %d sessions and %d workspaces, want %d and 10", s, w, len(ids))
	}
	if kept := closed - min(closed, base+records); kept > (open-base)/5 {
		t.Errorf("the daemon kept %d KiB of the %d KiB the sessions took", kept>>10, (open-base)>>10)
	}
	if st := td.d.Status(); st.Sessions.Open != 0 || len(st.Workspaces) != 0 {
		t.Errorf("status after closing: %+v", st)
	}
	if got := len(td.sim.Received()); got != n {
		t.Errorf("%d model requests after the sessions closed: closed sessions were re-warmed", got-n)
	}
}

// A prompt that arrives while the daemon drains is refused with its own
// code, not as an internal error: nothing was started, the editor may send
// it again once a daemon is back.
func TestPromptWhileDrainingRefusedAsShuttingDown(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	td.d.mu.Lock()
	td.d.draining = true
	td.d.mu.Unlock()
	var r acp.PromptResponse
	err := ed.call(rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock("hello")}}, &r)
	var wire *jsonrpc2.Error
	if !errors.As(err, &wire) || wire.Code != rpc.CodeShuttingDown {
		t.Fatalf("prompt while draining: %v, want code %d", err, rpc.CodeShuttingDown)
	}
	td.d.mu.Lock()
	td.d.draining = false
	td.d.mu.Unlock()
}
