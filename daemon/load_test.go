package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/store"
)

// seedSession stores a session of n items (whole turns of five: user
// message, reasoning with a summary and encrypted content, function call,
// its output, answer) in td's workspace directly in the store, and returns
// its id and the number of session/update notifications its replay shows.
func seedSession(tb testing.TB, db *store.DB, root string, n int) (acp.SessionId, int) {
	tb.Helper()
	ctx := context.Background()
	id := newSessionID()
	if err := db.CreateSession(ctx, store.Session{ID: id, Root: root, Mode: ModeAsk, Model: "sim-model"}); err != nil {
		tb.Fatal(err)
	}
	blob := strings.Repeat("x", 2048)
	output := strings.Repeat("line of output\n", 200)
	item := func(i int) store.NewItem {
		var v map[string]any
		origin := store.OriginOutput
		switch i % 5 {
		case 0:
			origin = store.OriginInput
			v = map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": fmt.Sprintf("u%d please look at the code", i)}}}
		case 1:
			v = map[string]any{"type": "reasoning", "summary": []any{map[string]any{"type": "summary_text", "text": "thinking about it"}}, "encrypted_content": blob}
		case 2:
			v = map[string]any{"type": "function_call", "call_id": fmt.Sprintf("c%d", i), "name": "read_file", "arguments": `{"path":"a.txt"}`}
		case 3:
			origin = store.OriginInput
			v = map[string]any{"type": "function_call_output", "call_id": fmt.Sprintf("c%d", i-1), "output": output}
		case 4:
			v = map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": strings.Repeat("the answer is here. ", 40)}}}
		}
		b, _ := json.Marshal(v)
		return store.NewItem{Origin: origin, Data: b}
	}
	for i := 0; i < n; {
		var batch []store.NewItem
		for ; i < n && len(batch) < 2000; i++ {
			batch = append(batch, item(i))
		}
		if _, err := db.Items().Append(ctx, id, 0, batch); err != nil {
			tb.Fatal(err)
		}
	}
	return acp.SessionId(id), n // every item shows as one update
}

// rawEditor speaks NDJSON on the daemon's socket by hand, so that a test
// sees exactly when each frame arrives and can stop reading at will.
type rawEditor struct {
	tb   testing.TB
	conn net.Conn
	r    *bufio.Reader
	next int
}

func (td *testDaemon) dialRaw(tb testing.TB) *rawEditor {
	tb.Helper()
	conn, err := net.Dial("unix", td.cfg.Socket)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	e := &rawEditor{tb: tb, conn: conn, r: bufio.NewReaderSize(conn, 1<<20)}
	e.send(rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber})
	for {
		if f := e.read(); f.ID != nil {
			break
		}
	}
	return e
}

// send writes a call and returns its id.
func (e *rawEditor) send(method string, params any) int {
	e.tb.Helper()
	e.next++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": e.next, "method": method, "params": params})
	e.conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
	if _, err := e.conn.Write(append(b, '\n')); err != nil {
		e.tb.Fatalf("send %s: %v", method, err)
	}
	return e.next
}

// frame is one message from the daemon.
type frame struct {
	ID     *int            `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// read returns the next frame, failing the test after 30 s without one.
func (e *rawEditor) read() frame {
	e.tb.Helper()
	return e.decode(e.readLine())
}

// updatePrefix starts every session/update the daemon writes.
var updatePrefix = []byte(`{"jsonrpc":"2.0","method":"session/update",`)

// readLine returns the next frame undecoded, valid until the next read,
// failing the test after 30 s without one. A frame that fits the reader's
// buffer is not copied: the benchmark's client costs little CPU of its own.
func (e *rawEditor) readLine() []byte {
	e.tb.Helper()
	e.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	line, err := e.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		var rest []byte
		line = append([]byte(nil), line...)
		rest, err = e.r.ReadBytes('\n')
		line = append(line, rest...)
	}
	if err != nil {
		e.tb.Fatalf("read: %v", err)
	}
	return line
}

func (e *rawEditor) decode(line []byte) frame {
	e.tb.Helper()
	var f frame
	if err := json.Unmarshal(line, &f); err != nil {
		e.tb.Fatalf("bad frame %q: %v", line, err)
	}
	return f
}

// loadTimes sends session/load for id and reads until its answer; it
// returns the number of session/update frames before the answer, the time
// to the first of them, and the time to the answer.
func (e *rawEditor) loadTimes(id acp.SessionId, cwd string) (updates int, first, answer time.Duration) {
	e.tb.Helper()
	start := time.Now()
	call := e.send(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: cwd, McpServers: []acp.McpServer{}})
	for {
		line := e.readLine()
		if bytes.HasPrefix(line, updatePrefix) { // not decoded: an editor's own parsing is not the daemon's time
			if !bytes.Contains(line, []byte(`"sessionUpdate":"available_commands_update"`)) {
				if updates == 0 {
					first = time.Since(start)
				}
				updates++
			}
			continue
		}
		f := e.decode(line)
		switch {
		case f.Method == rpc.MethodSessionUpdate:
			e.tb.Fatalf("a session/update framed unlike the others: %s", line)
		case f.ID != nil && *f.ID == call:
			if f.Error != nil {
				e.tb.Fatalf("session/load: %s", f.Error)
			}
			return updates, first, time.Since(start)
		}
	}
}

// session/load replays every stored item, in order, before its answer.
func TestLoadReplaysLongSessionInOrder(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	const n = 3000
	id, want := seedSession(t, td.d.db, td.root, n)
	e := td.connect()
	e.initialize()
	e.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	ups := replayOnly(e.updates()) // all of them arrived before the answer
	if len(ups) != want {
		t.Fatalf("replayed %d updates before the answer, want %d", len(ups), want)
	}
	for i := 0; i < n; i += 5 {
		u := ups[i].UserMessageChunk
		if u == nil || !strings.HasPrefix(u.Content.Text.Text, fmt.Sprintf("u%d ", i)) {
			t.Fatalf("update %d = %+v, want user message u%d", i, ups[i], i)
		}
	}
}

// While session/load streams a long replay, the connection's read loop
// keeps serving: a request sent after the first replayed update is answered
// before the replay ends.
func TestLoadDoesNotHoldTheReadLoop(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	const n = 5000 // megabytes of replay: far more than the socket buffers
	id, want := seedSession(t, td.d.db, td.root, n)
	e := td.dialRaw(t)
	load := e.send(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}})
	if f := e.read(); f.Method != rpc.MethodSessionUpdate {
		t.Fatalf("first frame after session/load = %+v, want a session/update", f)
	}
	status := e.send(rpc.MethodHearthStatus, nil)
	updates, after := 1, -1 // updates seen; of them, those after the status answer
	for {
		f := e.read()
		switch {
		case f.Method == rpc.MethodSessionUpdate && !commandsUpdate(f):
			updates++
			if after >= 0 {
				after++
			}
		case f.ID != nil && *f.ID == status:
			after = 0
		case f.ID != nil && *f.ID == load:
			if updates != want {
				t.Errorf("%d updates before the load's answer, want %d", updates, want)
			}
			if after <= 0 {
				t.Fatalf("_hearth/status was answered only after the replay (%d updates after it): the load held the read loop", after)
			}
			t.Logf("status answered with %d of %d replayed updates still to come", after, want)
			return
		}
	}
}

// BenchmarkLoad measures session/load of sessions built through the
// daemon (buildSession: real turns, tool results stored with their views)
// through the real socket, by a client that reads as fast as it can: the
// time to the first replayed update and to the answer, and the CPU the
// process (daemon and client) spent per load. "open": the session is open
// in the daemon (as the build left it, its warm-up done); "restart": a
// fresh daemon opens it from the database.
func BenchmarkLoad(b *testing.B) {
	for _, size := range []int{2000, 10000, 20000} {
		b.Run(fmt.Sprintf("items=%d", size), func(b *testing.B) {
			td := startDaemon(&testing.T{}, sim.Options{}, "") // closed below: a benchmark has no *testing.T
			defer func() {
				td.d.Close()
				td.sim.Close()
				os.RemoveAll(filepath.Dir(td.cfg.DataDir))
			}()
			built := time.Now()
			id, items := buildSession(b, td, size)
			b.Logf("built a session of %d items through the daemon in %v: %s", items, time.Since(built).Round(time.Millisecond), storedBytes(b, td, id))
			want := 0 // the updates of the first load; every later one shows the same
			for _, mode := range []string{"open", "restart"} {
				b.Run(mode, func(b *testing.B) { benchLoad(b, td, id, mode, items, &want) })
			}
		})
	}
}

// benchLoad loads session id b.N times and reports the mean times and CPU.
func benchLoad(b *testing.B, td *testDaemon, id acp.SessionId, mode string, items int, want *int) {
	if mode == "open" {
		waitWarm(td, id)
	}
	var first, answer, cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if mode == "restart" {
			b.StopTimer()
			td.d.Close()
			td.restart()
			b.StartTimer()
		}
		e := td.dialRaw(b)
		c0 := cpuTime()
		n, f, a := e.loadTimes(id, td.root)
		cpu += cpuTime() - c0
		if *want == 0 {
			*want = n
		}
		if n != *want || n < items*9/10 {
			b.Fatalf("%d updates for %d items, want %d", n, items, *want)
		}
		first += f
		answer += a
		e.conn.Close()
	}
	b.ReportMetric(float64(first.Microseconds())/1000/float64(b.N), "ms-first-update")
	b.ReportMetric(float64(answer.Microseconds())/1000/float64(b.N), "ms-answer")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "ms-cpu")
}

// storedBytes says how much of session id the store holds: its items, their
// views.
func storedBytes(tb testing.TB, td *testDaemon, id acp.SessionId) string {
	items, err := td.d.db.Items().List(context.Background(), string(id))
	if err != nil {
		tb.Fatal(err)
	}
	var data, views, withView int
	for _, it := range items {
		data += len(it.Data)
		views += len(it.View)
		if it.View != nil {
			withView++
		}
	}
	return fmt.Sprintf("%.1f MB of items, %d with a view (%.2f MB of views)", float64(data)/1e6, withView, float64(views)/1e6)
}

// waitWarm waits for the open session id's warm-up to end: the simulator
// parsing a re-warm of megabytes in this process would take the CPU a
// remote server does not.
func waitWarm(td *testDaemon, id acp.SessionId) {
	td.d.mu.Lock()
	s := td.d.sessions[string(id)]
	td.d.mu.Unlock()
	if s == nil {
		return
	}
	if done, wait := s.conv.WarmupDone(); done != nil {
		wait()
	}
}

// cpuTime is the CPU (user and system) this process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The hand-made encodings of text chunks and tool results give exactly the
// SDK's bytes.
func TestFastUpdatesMatchSDK(t *testing.T) {
	texts := []string{"", "plain", "<html> & \"quotes\"\n\ttabs \u2028 é \x01", strings.Repeat("long ", 1000)}
	for _, text := range texts {
		for kind, u := range map[string]acp.SessionUpdate{
			"user_message_chunk":  acp.UpdateUserMessageText(text),
			"agent_message_chunk": acp.UpdateAgentMessageText(text),
			"agent_thought_chunk": acp.UpdateAgentThoughtText(text),
		} {
			want, err := json.Marshal(acp.SessionNotification{SessionId: "ses_1", Update: u})
			if err != nil {
				t.Fatal(err)
			}
			if got := textNotification("ses_1", kind, text); string(got) != string(want) {
				t.Errorf("%s:\n got %s\nwant %s", kind, got, want)
			}
		}
		for _, st := range []acp.ToolCallStatus{acp.ToolCallStatusCompleted, acp.ToolCallStatusFailed} {
			u := acp.UpdateToolCall("call_1", acp.WithUpdateStatus(st),
				acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(text))}))
			want, err := json.Marshal(acp.SessionNotification{SessionId: "ses_1", Update: u})
			if err != nil {
				t.Fatal(err)
			}
			if got := toolResultNotification("ses_1", "call_1", string(st), text); string(got) != string(want) {
				t.Errorf("tool result %s:\n got %s\nwant %s", st, got, want)
			}
		}
	}
}

// A resumed session shows its tool calls as they were shown live: for each
// call, the state the live updates left it in (kind, title, status, output,
// diff, locations, input) is the state its replay leaves it in.
func TestLoadReplaysToolCallsAsLive(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeFullAuto}, nil)
	for _, p := range []string{
		`look sim:calls=1 sim:tool=read_file sim:args={"path":"a.txt"}`,
		writeA,
		`edit sim:calls=1 sim:tool=edit_file sim:args={"path":"a.txt","old_string":"changed","new_string":"edited"}`,
		`new sim:calls=1 sim:tool=write_file sim:args={"path":"new.txt","content":"fresh\n"}`,
		`run sim:calls=1 sim:tool=shell sim:args={"command":"echo\u0020hi"}`,
		`bad sim:calls=1 sim:tool=read_file sim:args={"path":"missing.txt"}`,
	} {
		if stop := ed.prompt(id, p); stop != acp.StopReasonEndTurn {
			t.Fatalf("%s: stop %q", p, stop)
		}
	}
	live := toolStates(t, ed.updates())
	if len(live) != 6 {
		t.Fatalf("%d tool calls shown live, want 6", len(live))
	}
	b := td.connect()
	b.initialize()
	b.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	replayed := toolStates(t, b.updates())
	for call, want := range live {
		if got := replayed[call]; got != want {
			t.Errorf("tool call %s:\nlive     %s\nreplayed %s", call, want, got)
		}
	}
	if len(replayed) != len(live) {
		t.Errorf("%d tool calls replayed, %d live", len(replayed), len(live))
	}
	for _, want := range []string{`"kind":"edit"`, `"type":"diff"`, `"locations"`, `"kind":"execute"`, `"status":"failed"`} {
		found := false
		for _, s := range replayed {
			found = found || strings.Contains(s, want)
		}
		if !found {
			t.Errorf("no replayed tool call shows %s", want)
		}
	}
}

// toolStates folds tool_call and tool_call_update notifications into each
// call's final state, as an editor does (a field an update carries replaces
// the one before), encoded as JSON for comparison.
func toolStates(t *testing.T, ups []acp.SessionUpdate) map[string]string {
	t.Helper()
	states := map[string]map[string]json.RawMessage{}
	for _, u := range ups {
		if u.ToolCall == nil && u.ToolCallUpdate == nil {
			continue
		}
		b, _ := json.Marshal(u)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		var id string
		json.Unmarshal(m["toolCallId"], &id)
		if states[id] == nil {
			states[id] = map[string]json.RawMessage{}
		}
		for k, v := range m {
			if k != "sessionUpdate" {
				states[id][k] = v
			}
		}
	}
	out := map[string]string{}
	for id, m := range states {
		b, _ := json.Marshal(m) // map keys encode sorted
		out[id] = string(b)
	}
	return out
}

// commandsUpdate says whether f is the available_commands_update that
// follows a replay (not a replayed item).
func commandsUpdate(f frame) bool {
	return bytes.Contains(f.Params, []byte(`"sessionUpdate":"available_commands_update"`))
}

// replayOnly drops the available_commands_update from ups.
func replayOnly(ups []acp.SessionUpdate) []acp.SessionUpdate {
	var out []acp.SessionUpdate
	for _, u := range ups {
		if u.AvailableCommandsUpdate == nil {
			out = append(out, u)
		}
	}
	return out
}

// mustCall sends a call and reads until its answer (skipping notifications),
// decoding its result into result when not nil.
func (e *rawEditor) mustCall(method string, params, result any) {
	e.tb.Helper()
	id := e.send(method, params)
	for {
		f := e.read()
		if f.ID == nil || *f.ID != id || f.Method != "" {
			continue
		}
		if f.Error != nil {
			e.tb.Fatalf("%s: %s", method, f.Error)
		}
		if result != nil {
			if err := json.Unmarshal(f.Result, result); err != nil {
				e.tb.Fatalf("%s: bad result %s: %v", method, f.Result, err)
			}
		}
		return
	}
}
