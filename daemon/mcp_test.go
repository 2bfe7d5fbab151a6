package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/mcp/mcptest"
	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// mcpTestServer is this test binary as a stdio MCP server named name
// (mcptest's tools), and the file it writes its pid to.
func mcpTestServer(t *testing.T, name string) (acp.McpServer, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	return acp.McpServer{Stdio: &acp.McpServerStdio{Name: name, Command: exe,
		Args: []string{mcptest.Subcommand, "--pid-file", pidFile}, Env: []acp.EnvVariable{}}}, pidFile
}

func (e *editor) newSessionWith(cwd string, servers ...acp.McpServer) acp.SessionId {
	e.t.Helper()
	var r acp.NewSessionResponse
	e.must(rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: cwd, McpServers: append([]acp.McpServer{}, servers...)}, &r)
	return r.SessionId
}

// processGone reports whether the process whose pid is in pidFile has
// exited and been reaped.
func processGone(t *testing.T, pidFile string) bool {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// toolNames lists the function tools of a request.
func toolNames(t *testing.T, r sim.Received) []string {
	var tools []struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	}
	if err := json.Unmarshal(r.Tools, &tools); err != nil {
		t.Fatalf("tools %s: %v", r.Tools, err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	return names
}

func toolUpdates(ups []acp.SessionUpdate) (status map[acp.ToolCallId]acp.ToolCallStatus) {
	status = map[acp.ToolCallId]acp.ToolCallStatus{}
	for _, u := range ups {
		if u.ToolCall != nil {
			status[u.ToolCall.ToolCallId] = u.ToolCall.Status
		}
		if u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil {
			status[u.ToolCallUpdate.ToolCallId] = *u.ToolCallUpdate.Status
		}
	}
	return status
}

const echoHi = `sim:calls=1 sim:tool=mcp__tests__echo sim:args={"text":"hi"}`

// An MCP server given in session/new: its tools are in every request (the
// warm-up's included, so the turn's requests stay incremental), a call asks
// for permission in ask mode, runs on the server, and shows as a tool call.
func TestMCPToolCalledWithPermission(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	a := &asker{answers: []string{"allow_once"}}
	ed := td.connectAnswering(a.onCall)
	var init acp.InitializeResponse
	ed.must(rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}, &init)
	if mc := init.AgentCapabilities.McpCapabilities; !mc.Http || !mc.Sse {
		t.Errorf("initialize advertised mcpCapabilities %+v", mc)
	}
	srv, _ := mcpTestServer(t, "tests")
	id := ed.newSessionWith(td.root, srv)
	if stop := ed.prompt(id, echoHi); stop != acp.StopReasonEndTurn {
		t.Fatalf("stop %s", stop)
	}
	if out := lastToolOutput(t, td); out != "echo: hi" {
		t.Errorf("the model got %q", out)
	}
	recs := td.sim.Received()
	for _, r := range recs {
		names := strings.Join(toolNames(t, r), " ")
		if !strings.HasSuffix(names, "shell update_plan mcp__tests__crash mcp__tests__echo mcp__tests__hang mcp__tests__peek") {
			t.Errorf("request tools: %s", names)
		}
		if !strings.Contains(string(r.Tools), `"parameters":{"additionalProperties":false,"properties":{"text":{"description":"what to echo","type":"string"}},"required":["text"],"type":"object"}`) {
			t.Errorf("echo's parameters are not the server's schema: %s", r.Tools)
		}
	}
	if a.asked() != 1 {
		t.Fatalf("asked %d times", a.asked())
	}
	if tc := a.seen[0].ToolCall; tc.Title == nil || *tc.Title != "tests: echo" || tc.Kind == nil || *tc.Kind != acp.ToolKindOther {
		t.Errorf("permission asked about %+v", tc)
	}
	ed.waitFor("the call's completion", func(ups []acp.SessionUpdate) bool {
		for _, st := range toolUpdates(ups) {
			if st == acp.ToolCallStatusCompleted {
				return true
			}
		}
		return false
	})
	// The tool list is byte-stable: everything after the warm-up chains.
	det, err := td.d.Inspect(context.Background(), rpc.InspectParams{SessionID: string(id)})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, r := range det.Session.Requests {
		kinds = append(kinds, r.Kind)
	}
	if strings.Join(kinds, " ") != "warmup incremental incremental" {
		t.Errorf("request kinds %v", kinds)
	}
	var call bool
	for _, it := range det.Session.Items {
		call = call || (it.Type == "function_call" && strings.Contains(string(it.Data), `"name":"mcp__tests__echo"`))
	}
	if !call {
		t.Error("inspect does not show the MCP call")
	}
}

// A rejected call does not reach the server; read-only mode refuses without
// asking; a read-only tool (readOnlyHint) runs without asking.
func TestMCPRefusedAndReadOnly(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	a := &asker{answers: []string{"reject_once"}}
	ed := td.connectAnswering(a.onCall)
	ed.initialize()
	srv, _ := mcpTestServer(t, "tests")
	id := ed.newSessionWith(td.root, srv)
	ed.prompt(id, echoHi)
	if out := lastToolOutput(t, td); !strings.Contains(out, "rejected") || strings.Contains(out, "echo: hi") {
		t.Errorf("after a rejection the model got %q", out)
	}
	ed.prompt(id, `sim:calls=1 sim:tool=mcp__tests__peek sim:args={}`)
	if out := lastToolOutput(t, td); out != "peeked" {
		t.Errorf("peek answered %q", out)
	}
	ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeReadOnly}, &acp.SetSessionModeResponse{})
	ed.prompt(id, echoHi)
	if out := lastToolOutput(t, td); !strings.Contains(out, "read-only mode") {
		t.Errorf("in read-only mode the model got %q", out)
	}
	if a.asked() != 1 {
		t.Errorf("asked %d times; only the first echo should ask", a.asked())
	}
}

// A server that dies in the middle of a call, or never answers, gives the
// model a tool error and the turn ends.
func TestMCPCrashAndHang(t *testing.T) {
	td := startDaemonWith(t, sim.Options{}, "", func(c *Config) { c.MCPCallTimeout = 300 * time.Millisecond })
	ed := td.connect()
	ed.initialize()
	hang, _ := mcpTestServer(t, "h")
	crash, pidFile := mcpTestServer(t, "c")
	id := ed.newSessionWith(td.root, hang, crash)
	ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeFullAuto}, &acp.SetSessionModeResponse{})
	if stop := ed.prompt(id, `sim:calls=1 sim:tool=mcp__h__hang sim:args={}`); stop != acp.StopReasonEndTurn {
		t.Fatalf("stop %s", stop)
	}
	if out := lastToolOutput(t, td); !strings.Contains(out, `the MCP server "h" did not answer hang within 300ms`) {
		t.Errorf("after a hang the model got %q", out)
	}
	ed.prompt(id, `sim:calls=1 sim:tool=mcp__c__crash sim:args={}`)
	if out := lastToolOutput(t, td); !strings.Contains(out, `MCP server "c"`) || !strings.HasPrefix(out, "error:") {
		t.Errorf("after a crash the model got %q", out)
	}
	ed.prompt(id, `sim:calls=1 sim:tool=mcp__c__echo sim:args={"text":"again"}`)
	if out := lastToolOutput(t, td); !strings.Contains(out, `the MCP server "c" is not running`) || !strings.Contains(out, "crashing on purpose") {
		t.Errorf("a call to the crashed server gave %q", out)
	}
	if !processGone(t, pidFile) {
		t.Error("the crashed server was not reaped")
	}
}

// A session's servers stop when it closes (idle, then reaped), and at the
// daemon's Close.
func TestMCPServersStopWithTheSession(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	srv1, pid1 := mcpTestServer(t, "one")
	srv2, pid2 := mcpTestServer(t, "two")
	ed.newSessionWith(td.root, srv1)
	ed2 := td.connect()
	ed2.initialize()
	ed2.newSessionWith(td.root, srv2)
	if processGone(t, pid1) || processGone(t, pid2) {
		t.Fatal("a server is gone while its session is open")
	}
	ed.c.Close()
	td.waitDetached(1)
	if n, _ := td.d.reaper.reap(time.Now().Add(time.Hour)); n != 1 {
		t.Fatalf("reaped %d sessions", n)
	}
	if !processGone(t, pid1) {
		t.Error("the server of a closed session is still running")
	}
	if processGone(t, pid2) {
		t.Error("the other session's server stopped too")
	}
	td.d.Close()
	if !processGone(t, pid2) {
		t.Error("the daemon's Close left a server running")
	}
}

// A server that cannot start is told to the editor at the first prompt; the
// session works without it, with the servers that did start.
func TestMCPServerFailsToStart(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	good, _ := mcpTestServer(t, "good")
	bad := acp.McpServer{Stdio: &acp.McpServerStdio{Name: "broken", Command: "/no/such/mcp-server", Args: []string{}, Env: []acp.EnvVariable{}}}
	id := ed.newSessionWith(td.root, bad, good)
	if stop := ed.prompt(id, "hello"); stop != acp.StopReasonEndTurn {
		t.Fatalf("stop %s", stop)
	}
	text := agentText(ed.updates())
	if !strings.Contains(text, `MCP server "broken" did not start`) || !strings.Contains(text, "/no/such/mcp-server") {
		t.Errorf("the editor was told %q", text)
	}
	if names := strings.Join(toolNames(t, td.sim.Received()[0]), " "); strings.Contains(names, "broken") || !strings.Contains(names, "mcp__good__echo") {
		t.Errorf("tools %s", names)
	}
	ed.prompt(id, "hello again")
	if n := strings.Count(agentText(ed.updates()), "did not start"); n != 1 {
		t.Errorf("the notice was shown %d times", n)
	}
}

// Bad server configurations are refused naming the field.
func TestMCPBadConfig(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	for _, c := range []struct{ servers, field string }{
		{`[{"name":"x","command":"","args":[],"env":[]}]`, "mcpServers.0.command"},
		{`[{"name":"","command":"x","args":[],"env":[]}]`, "mcpServers.0.name"},
		{`[{"type":"http","name":"x","url":"ftp://h","headers":[]}]`, "mcpServers.0.url"},
		{`[{"type":"acp","name":"x","id":"1"}]`, "mcpServers.0.type"},
		{`[{"name":"x","command":"y","args":"z"}]`, "mcpServers.0"},
	} {
		var r acp.NewSessionResponse
		err := ed.call(rpc.MethodSessionNew, json.RawMessage(`{"cwd":"`+td.root+`","mcpServers":`+c.servers+`}`), &r)
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: got %v, want an error naming %s", c.servers, err, c.field)
		}
	}
}

// session/load gives a session not open its servers before it opens, and
// changes those of an open session that differ: the next request is full
// and carries the new list.
func TestMCPServersOnLoad(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	srv, pidFile := mcpTestServer(t, "tests")
	ed.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{srv}}, &acp.LoadSessionResponse{})
	ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeFullAuto}, &acp.SetSessionModeResponse{})
	ed.prompt(id, echoHi)
	if out := lastToolOutput(t, td); out != "echo: hi" {
		t.Errorf("the model got %q", out)
	}
	det, err := td.d.Inspect(context.Background(), rpc.InspectParams{SessionID: string(id)})
	if err != nil {
		t.Fatal(err)
	}
	if r := det.Session.Requests[1]; r.Kind != "full" || !strings.Contains(r.FullReason, "tools") {
		t.Errorf("the first request after the tools changed: %s (%s)", r.Kind, r.FullReason)
	}
	// Loaded again with the same servers: nothing restarts.
	ed.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{srv}}, &acp.LoadSessionResponse{})
	if processGone(t, pidFile) {
		t.Error("a load with the same servers restarted them")
	}
	// Loaded without: the server stops.
	ed.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, &acp.LoadSessionResponse{})
	if !processGone(t, pidFile) {
		t.Error("a load without the server left it running")
	}
	// A session not open starts its servers before it warms up.
	ed.c.Close()
	td.waitDetached(1)
	td.d.reaper.reap(time.Now().Add(time.Hour))
	ed2 := td.connect()
	ed2.initialize()
	before := len(td.sim.Received())
	srv2, _ := mcpTestServer(t, "again")
	ed2.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{srv2}}, &acp.LoadSessionResponse{})
	warm := td.waitRequests(before + 1)[before]
	if names := strings.Join(toolNames(t, warm), " "); !strings.Contains(names, "mcp__again__echo") {
		t.Errorf("the re-warm after the load carried tools %s", names)
	}
}

// A session opened in a subdirectory of a repository starts its stdio MCP
// servers there, where its shell runs, not at the repository's root: a
// server that reads its configuration from its working directory finds
// the session's. Loaded again after a restart of the session, the same.
func TestMCPServerStartsInTheSessionsDirectory(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	os.Mkdir(filepath.Join(td.root, ".git"), 0o755)
	sub := filepath.Join(td.root, "pkg", "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	ed := td.connect()
	ed.initialize()
	srv, pidFile := mcpTestServer(t, "m")
	id := ed.newSessionWith(sub, srv)
	cwdOf := func() string {
		t.Helper()
		b, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatal(err)
		}
		dir, err := os.Readlink("/proc/" + string(b) + "/cwd")
		if err != nil {
			t.Fatal(err)
		}
		return dir
	}
	want, _ := filepath.EvalSymlinks(sub)
	if got := cwdOf(); got != want {
		t.Errorf("the MCP server runs in %s, want the session's directory %s", got, want)
	}
	ed.must(rpc.MethodSessionClose, acp.CloseSessionRequest{SessionId: id}, nil)
	os.Remove(pidFile)
	ed.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: sub, McpServers: []acp.McpServer{srv}}, &acp.LoadSessionResponse{})
	if got := cwdOf(); got != want {
		t.Errorf("loaded again, the MCP server runs in %s, want %s", got, want)
	}
}
