//go:build linux

package workspace

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// execLayout is the header of every exec_command and write_stdin result.
var execLayout = regexp.MustCompile(`^Chunk ID: [0-9a-f]{6}\nWall time: [0-9]+\.[0-9]{4} seconds\n` +
	`(Process exited with code (-?[0-9]+)|Process running with session ID ([0-9]+))\nOriginal token count: ([0-9]+)\nOutput:\n`)

// execResult is one exec_command or write_stdin result, taken apart.
type execResult struct {
	Result
	running bool
	id      int // while running
	code    int // once exited
	tokens  int
	output  string
}

func parseExec(t *testing.T, res Result) execResult {
	t.Helper()
	m := execLayout.FindStringSubmatch(res.Output)
	if m == nil {
		t.Fatalf("not an exec result: %+v", res)
	}
	r := execResult{Result: res, running: m[3] != "", output: res.Output[len(m[0]):]}
	r.code, _ = strconv.Atoi(m[2])
	r.id, _ = strconv.Atoi(m[3])
	r.tokens, _ = strconv.Atoi(m[4])
	return r
}

func execTools(t *testing.T, r *Root) (*Toolset, *Processes) {
	ps := NewProcesses()
	t.Cleanup(ps.Close)
	return NewToolset(r).WithProcesses(ps), ps
}

// TestExecCommandPythonInAPty: python3 -i started with a terminal stays
// running; written `print(6*7)`, it answers 42; told to exit, its end is
// reported and its id is gone.
func TestExecCommandPythonInAPty(t *testing.T) {
	r, _, _ := newTree(t)
	useSandbox(t)
	ts, ps := execTools(t, r)
	start := parseExec(t, call(t, ts, "exec_command", `{"cmd":"python3 -i -q","tty":true,"yield_time_ms":500}`))
	if !start.running || start.IsError || start.Title != "Run python3 -i -q" {
		t.Fatalf("python3 -i is not running: %+v", start)
	}
	if got := ps.List(); len(got) != 1 || got[0].ID != start.id || !got[0].TTY || !got[0].Running {
		t.Fatalf("List = %+v", got)
	}
	id := strconv.Itoa(start.id)
	answer := parseExec(t, call(t, ts, "write_stdin", `{"session_id":`+id+`,"chars":"print(6*7)\n","yield_time_ms":1500}`))
	for tries := 0; !strings.Contains(answer.output, "42") && answer.running && tries < 5; tries++ {
		answer = parseExec(t, call(t, ts, "write_stdin", `{"session_id":`+id+`}`)) // slow machine: read on
	}
	if !strings.Contains(answer.output, "42\r\n") || !answer.running || answer.id != start.id {
		t.Fatalf("after print(6*7): %+v", answer)
	}
	end := parseExec(t, call(t, ts, "write_stdin", `{"session_id":`+id+`,"chars":"exit()\n","yield_time_ms":5000}`))
	if end.running || end.code != 0 || end.IsError {
		t.Fatalf("after exit(): %+v", end)
	}
	if res := call(t, ts, "write_stdin", `{"session_id":`+id+`,"chars":"x"}`); !res.IsError || !strings.Contains(res.Output, "no process with session ID "+id) {
		t.Errorf("write_stdin to an ended process: %+v", res)
	}
	if got := ps.List(); len(got) != 0 {
		t.Errorf("List after the end = %+v", got)
	}
}

// TestExecCommandWithPipes: without a terminal the command reads its stdin
// from a pipe; a command that exits within the yield is reported ended at
// once, with its exit code.
func TestExecCommandWithPipes(t *testing.T) {
	r, _, _ := newTree(t)
	useSandbox(t)
	ts, _ := execTools(t, r)
	start := parseExec(t, call(t, ts, "exec_command", `{"cmd":"read a; echo got:$a; [ -t 0 ] || echo no tty; exit 3","yield_time_ms":250}`))
	if !start.running {
		t.Fatalf("the command ended before its input: %+v", start)
	}
	end := parseExec(t, call(t, ts, "write_stdin", mustJSON(t, map[string]any{"session_id": start.id, "chars": "hi\n", "yield_time_ms": 10_000})))
	if end.running || end.code != 3 || !end.IsError || end.output != "got:hi\nno tty\n" {
		t.Fatalf("end %+v", end)
	}
	quick := parseExec(t, call(t, ts, "exec_command", `{"cmd":"echo quick","workdir":"."}`))
	if quick.running || quick.code != 0 || quick.output != "quick\n" || quick.tokens != 2 {
		t.Fatalf("a quick command: %+v", quick)
	}
}

// TestExecCommandShowsOutputAfterLiveFirst: a command that ends within
// liveFirst of its first output is never shown live (its result has it);
// one that goes on printing is shown once liveFirst has passed.
func TestExecCommandShowsOutputAfterLiveFirst(t *testing.T) {
	r, _, _ := newTree(t)
	useSandbox(t)
	defer func(d time.Duration) { liveFirst = d }(liveFirst)
	liveFirst = time.Hour
	shown := make(chan string, 100)
	ps := NewProcesses()
	t.Cleanup(ps.Close)
	ts := NewToolset(r).WithProcesses(ps).WithLive(func(out string) { shown <- out })
	quick := parseExec(t, call(t, ts, "exec_command", `{"cmd":"echo quick"}`))
	if quick.running || quick.output != "quick\n" {
		t.Fatalf("a quick command: %+v", quick)
	}
	if len(shown) != 0 {
		t.Fatalf("a command that ended at once was shown live: %q", <-shown)
	}
	liveFirst = 10 * time.Millisecond
	fifo := filepath.Join(r.Path(), "go-on")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan Result, 1)
	go func() {
		done <- call(t, ts, "exec_command", `{"cmd":"echo early; read x < go-on","yield_time_ms":30000}`)
	}()
	select {
	case out := <-shown:
		if out != "early\n" {
			t.Errorf("shown %q", out)
		}
	case res := <-done:
		t.Fatalf("the call ended before the test let it: %+v", res)
	case <-time.After(30 * time.Second):
		t.Fatal("the running command's output was never shown")
	}
	if err := os.WriteFile(fifo, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if end := parseExec(t, <-done); end.running || end.output != "early\n" {
		t.Fatalf("end %+v", end)
	}
}

// TestExecCommandBoundsProcesses: a session keeps at most MaxProcesses;
// one more ends the least recently used and says so.
func TestExecCommandBoundsProcesses(t *testing.T) {
	r, _, _ := newTree(t)
	useSandbox(t)
	ts, ps := execTools(t, r)
	var first int
	for i := 0; i <= MaxProcesses; i++ {
		res := parseExec(t, call(t, ts, "exec_command", `{"cmd":"echo started; exec sleep 600","yield_time_ms":250}`))
		if !res.running {
			t.Fatalf("process %d: %+v", i, res)
		}
		if i == 0 {
			first = res.id
		}
		if noted := strings.Contains(res.output, "[hearth ended process "+strconv.Itoa(first)+" "); noted != (i == MaxProcesses) {
			t.Errorf("process %d: %q", i, res.output)
		}
	}
	got := ps.List()
	if len(got) != MaxProcesses || got[0].ID == first {
		t.Errorf("List = %+v", got)
	}
	if res := call(t, ts, "write_stdin", mustJSON(t, map[string]any{"session_id": first})); !res.IsError {
		t.Errorf("write_stdin to the ended process: %+v", res)
	}
}

// TestExecCommandOutputBound: output over max_output_tokens keeps its head
// and tail, the cut said, and the original token count.
func TestExecCommandOutputBound(t *testing.T) {
	r, _, _ := newTree(t)
	useSandbox(t)
	ts, _ := execTools(t, r)
	res := parseExec(t, call(t, ts, "exec_command", `{"cmd":"echo first; yes middle | head -c 400000; echo; echo last","max_output_tokens":100}`))
	if res.running || res.tokens != (400000+len("first\n\nlast\n")+3)/4 {
		t.Fatalf("%+v", res)
	}
	if !strings.HasPrefix(res.output, "first\n") || !strings.HasSuffix(res.output, "\nlast\n") ||
		!regexp.MustCompile(`…[0-9]+ tokens truncated…`).MatchString(res.output) || len(res.output) > 500 {
		t.Errorf("output of %d bytes: %q", len(res.output), res.output)
	}
}

// TestExecCommandCancel: cancelling the call ends its command within 2 s,
// and nothing is left in the table.
func TestExecCommandCancel(t *testing.T) {
	r, root, _ := newTree(t)
	useSandbox(t)
	ts, ps := execTools(t, r)
	fifo := filepath.Join(root, "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan Result, 1)
	go func() {
		done <- ts.Run(ctx, "exec_command", json.RawMessage(`{"cmd":"trap '' TERM; echo > started; sleep 600","yield_time_ms":30000}`))
	}()
	if _, err := os.ReadFile(fifo); err != nil { // returns once the command has written
		t.Fatal(err)
	}
	cancelled := time.Now()
	cancel()
	res := <-done
	if took := time.Since(cancelled); took > 2*time.Second {
		t.Errorf("the call took %v to end after cancel", took)
	}
	if r := parseExec(t, res); r.running || !strings.Contains(r.output, "[cancelled]") {
		t.Errorf("cancelled: %+v", r)
	}
	if got := ps.List(); len(got) != 0 {
		t.Errorf("List after cancel = %+v", got)
	}
}

// TestProcessesCloseEndsThem: closing the table ends its processes (their
// pids are gone) and refuses new ones.
func TestProcessesCloseEndsThem(t *testing.T) {
	r, _, _ := newTree(t) // no sandbox: the pids are the host's
	ts, ps := execTools(t, r)
	res := parseExec(t, call(t, ts, "exec_command", `{"cmd":"sleep 600 & echo child=$!; echo sh=$$; wait","yield_time_ms":500}`))
	if !res.running {
		t.Fatalf("%+v", res)
	}
	procs := pids(t, res.output, "child", "sh")
	ps.Close()
	assertGone(t, procs)
	if res := call(t, ts, "exec_command", `{"cmd":"true"}`); !res.IsError || !strings.Contains(res.Output, "closing") {
		t.Errorf("exec_command after Close: %+v", res)
	}
}

// TestExecCommandBadArguments: every bad argument is a tool error, nothing
// runs.
func TestExecCommandBadArguments(t *testing.T) {
	r, _, _ := newTree(t)
	ts, ps := execTools(t, r)
	for _, c := range []struct{ tool, args, want string }{
		{"exec_command", `{"cmd":"true","yield_time_ms":-5}`, "yield_time_ms must be"},
		{"exec_command", `{"cmd":"true","max_output_tokens":0}`, "max_output_tokens must be at least 1"},
		{"exec_command", `{"cmd":"true","sandbox_permissions":"root"}`, "sandbox_permissions must be"},
		{"exec_command", `{"cmd":"true","workdir":"../.."}`, "workdir"},
		{"exec_command", `{"cmd":" "}`, "cmd is empty"},
		{"exec_command", `{"command":"true"}`, "unknown argument"},
		{"write_stdin", `{"session_id":4242,"chars":"x"}`, "no process with session ID 4242"},
		{"write_stdin", `{"session_id":1.5}`, "session_id must be"},
		{"write_stdin", `{"session_id":-1}`, "session_id must be"},
		{"write_stdin", `{"chars":"x"}`, `missing required argument "session_id"`},
		{"write_stdin", `{"session_id":1,"yield_time_ms":-1}`, "yield_time_ms must be"},
	} {
		if res := call(t, ts, c.tool, c.args); !res.IsError || !strings.Contains(res.Output, c.want) {
			t.Errorf("%s %s = %+v, want an error with %q", c.tool, c.args, res, c.want)
		}
	}
	if got := ps.List(); len(got) != 0 {
		t.Errorf("List = %+v", got)
	}
	if res := call(t, NewToolset(r), "exec_command", `{"cmd":"true"}`); !res.IsError {
		t.Errorf("exec_command without a session: %+v", res)
	}
}

// TestExecCommandCarriesEscalation: the escalation arguments reach the
// preview the permission request is made from.
func TestExecCommandCarriesEscalation(t *testing.T) {
	r, _, _ := newTree(t)
	ts, _ := execTools(t, r)
	pv, err := ts.Preview(context.Background(), "exec_command", json.RawMessage(`{"cmd":"curl example.com","sandbox_permissions":"require_escalated","justification":"fetch the page"}`))
	if err != nil || !pv.Escalation.Escalate || pv.Escalation.Justification != "fetch the page" || pv.Command != "curl example.com" {
		t.Errorf("Preview = %+v, %v", pv, err)
	}
}

// An apply_patch invocation sent through exec_command is applied as
// apply_patch (asked about as one), nothing run.
func TestExecCommandRunsApplyPatch(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "a.txt"), "a\n")
	ts, ps := execTools(t, r)
	args := mustJSON(t, map[string]string{"cmd": "apply_patch <<'EOF'\n" + shellTestPatch + "EOF"})
	if p := preview(t, ts, "exec_command", args); p.As != "apply_patch" || len(p.Files) != 1 {
		t.Fatalf("preview %+v", p)
	}
	if res := call(t, ts, "exec_command", args); res.IsError || len(res.Files) != 1 || readBack(t, filepath.Join(root, "a.txt")) != "A\n" {
		t.Fatalf("result %+v", res)
	}
	if got := ps.List(); len(got) != 0 {
		t.Errorf("List = %+v", got)
	}
}

// A repository an exec_command's process plants while a call waits on it
// is disarmed when the call ends, and the result says so.
func TestExecCommandDisarmsPlantedRepo(t *testing.T) {
	ts, dir := plantedTree(t)
	ps := NewProcesses()
	t.Cleanup(ps.Close)
	ts = ts.WithProcesses(ps)
	start := parseExec(t, call(t, ts, "exec_command", `{"cmd":"read x; mkdir -p planted/.git && printf '[core]\\n\\tfsmonitor = evil\\n' > planted/.git/config","yield_time_ms":250}`))
	if !start.running {
		t.Fatalf("%+v", start)
	}
	res := call(t, ts, "write_stdin", mustJSON(t, map[string]any{"session_id": start.id, "chars": "go\n", "yield_time_ms": 10_000}))
	if r := parseExec(t, res); r.running || r.code != 0 {
		t.Fatalf("%+v", r)
	}
	assertDisarmed(t, "planted through write_stdin", res, dir, "planted/.git", "evil")
}
