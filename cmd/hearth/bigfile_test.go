//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
)

var (
	bigFileGiB  = flag.Int("bigfile-gib", 1, "size in GiB of the sparse files TestBigFileMemory reads (the long run: 10)")
	bigTextMiB  = flag.Int("bigtext-mib", 32, "size in MiB of the text file of short lines TestBigFileMemory reads (the long run: 300)")
	bigFileGrow = flag.Int("bigfile-grow-mib", 50, "the most TestBigFileMemory lets the daemon's peak memory grow, in MiB")
)

// Files of gigabytes cost the daemon bounded memory, whatever tool the
// model turns on them: read_file (whole, paged, binary), grep, edit_file
// and write_file (refused), and the context delta when a file the model
// read grows huge. The daemon is its own process: its peak resident size
// (VmHWM) is read before and after.
func TestBigFileMemory(t *testing.T) {
	e := newE2E(t)
	size := int64(*bigFileGiB) << 30
	// A sparse file of zeros (binary), and one whose first lines are text
	// followed by a hole: "text" by its head, with a last line of a GiB.
	bin := filepath.Join(e.root, "big.bin")
	makeSparse(t, bin, nil, size)
	var head strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&head, "line %d of the big text\n", i)
	}
	makeSparse(t, filepath.Join(e.root, "big.txt"), []byte(head.String()), size)
	makeLines(t, filepath.Join(e.root, "lines.txt"), int64(*bigTextMiB)<<20)
	os.WriteFile(filepath.Join(e.root, "grow.txt"), []byte("small at first\n"), 0o644)
	// The daemon as users run it: the race detector's shadow memory, a
	// multiple of the heap, is not the daemon's.
	cmd := e.serveBinary(plainBinary(t))

	conn, err := net.Dial("unix", e.sock)
	if err != nil {
		t.Fatal(err)
	}
	s := newBigFileSession(t, conn, e.root)
	s.prompt(t, "hello") // the daemon's own start-up is not the files' cost
	before := vmHWM(t, cmd.Process.Pid)

	steps := []struct{ tool, args, want string }{
		{"read_file", `{"path":"big.bin"}`, "big.bin is a binary file of " + strconv.FormatInt(size, 10) + " bytes"},
		{"read_file", `{"path":"big.txt","limit":3}`, "     3\tline 3 of the big text\n[truncated: showing lines 1-3 of a file of "},
		{"read_file", `{"path":"big.txt","offset":998,"limit":2}`, "   999\tline 999 of the big text"},
		{"read_file", `{"path":"lines.txt","limit":3}`, "     3\tlines.txt line 3\n[truncated: showing lines 1-3 "},
		{"read_file", `{"path":"lines.txt"}`, "    20\tlines.txt line 20"},
		{"read_file", `{"path":"grow.txt"}`, "small at first"},
		{"grep", `{"pattern":"line.77.of","path":"big.txt"}`, "big.txt:77:line 77 of the big text"},
		{"grep", `{"pattern":"zzz-nowhere"}`, "no matches for"},
		{"edit_file", `{"path":"big.txt","old_string":"line","new_string":"row"}`, "use shell"},
		{"write_file", `{"path":"big.bin","content":"x"}`, "use shell"},
	}
	for _, st := range steps {
		start := time.Now()
		answer := s.prompt(t, fmt.Sprintf("sim:calls=1 sim:tool=%s sim:args=%s", st.tool, st.args))
		t.Logf("%s %s: %v, VmHWM %d MiB", st.tool, st.args, time.Since(start).Round(time.Millisecond), vmHWM(t, cmd.Process.Pid)>>20)
		if !strings.Contains(answer, st.want) {
			t.Errorf("%s %s: the model saw %q, want it to contain %q", st.tool, st.args, answer, st.want)
		}
	}
	// The file the model read grows to gigabytes, and the others change:
	// the next prompt's context delta looks at them.
	if err := os.Truncate(filepath.Join(e.root, "grow.txt"), size); err != nil {
		t.Fatal(err)
	}
	appendTo(t, filepath.Join(e.root, "big.txt"), "one more line\n")
	appendTo(t, bin, "x")
	s.prompt(t, "what changed?")
	if in := promptInput(t, e, "what changed?"); !strings.Contains(in, "grow.txt") {
		t.Errorf("the context delta does not name grow.txt: %s", in)
	}

	after := vmHWM(t, cmd.Process.Pid)
	grew := (after - before) >> 20
	t.Logf("daemon peak memory (VmHWM): %d MiB before the big files, %d MiB after (+%d MiB) for %d GiB files",
		before>>20, after>>20, grew, *bigFileGiB)
	if grew >= int64(*bigFileGrow) {
		t.Errorf("the daemon's peak memory grew by %d MiB, over the %d MiB bound", grew, *bigFileGrow)
	}
}

// daemonBinary measures another build of hearth side by side with this
// one (docs/BENCHMARKS.md): the tests that run the daemon as a process of
// its own (plainBinary) run it.
var daemonBinary = flag.String("daemon-bin", "", "a hearth binary the measuring tests run as their daemon instead of this tree's")

// plainBinary is hearth built without the race detector: the tests'
// binary, unless they run with -race, or -daemon-bin.
func plainBinary(t testing.TB) string {
	t.Helper()
	if *daemonBinary != "" {
		return *daemonBinary
	}
	if !raceEnabled {
		return binary
	}
	bin := filepath.Join(t.TempDir(), "hearth")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build hearth without -race: %v\n%s", err, out)
	}
	return bin
}

// bigFileSession is one ACP session on a daemon, prompted one turn at a
// time; it lives for one test.
type bigFileSession struct {
	c    *rpc.Client
	id   acp.SessionId
	text chan string
}

func newBigFileSession(t *testing.T, conn net.Conn, root string) *bigFileSession {
	s := &bigFileSession{text: make(chan string, 4096)}
	s.c = rpc.NewClient(conn, rpc.ClientOptions{OnNotify: func(method string, params json.RawMessage) {
		var n acp.SessionNotification
		if json.Unmarshal(params, &n) == nil && n.Update.AgentMessageChunk != nil && n.Update.AgentMessageChunk.Content.Text != nil {
			s.text <- n.Update.AgentMessageChunk.Content.Text.Text
		}
	}})
	t.Cleanup(func() { s.c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.c.Call(ctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, nil); err != nil {
		t.Fatal(err)
	}
	var r acp.NewSessionResponse
	if err := s.c.Call(ctx, rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: root, McpServers: []acp.McpServer{}}, &r); err != nil {
		t.Fatal(err)
	}
	s.id = r.SessionId
	return s
}

// prompt runs one turn and returns the answer's text. The reply follows
// every notification of the turn (the daemon flushes them first).
func (s *bigFileSession) prompt(t *testing.T, text string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var r acp.PromptResponse
	if err := s.c.Call(ctx, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: s.id, Prompt: []acp.ContentBlock{acp.TextBlock(text)}}, &r); err != nil {
		t.Fatalf("prompt %q: %v", text, err)
	}
	var b strings.Builder
	for {
		select {
		case chunk := <-s.text:
			b.WriteString(chunk)
		default:
			return b.String()
		}
	}
}

// promptInput is the input of the request that carried the user's text,
// as the simulator recorded it: the context delta and the message.
func promptInput(t *testing.T, e *e2eEnv, text string) string {
	t.Helper()
	recs := e.sim.Received()
	for i := len(recs) - 1; i >= 0; i-- {
		var b strings.Builder
		for _, it := range recs[i].Input {
			b.Write(it)
		}
		if strings.Contains(b.String(), text) {
			return b.String()
		}
	}
	t.Fatalf("no request carried %q", text)
	return ""
}

// makeSparse writes head at the start of a new file and extends it to size
// bytes with a hole: no disk space, and zeros when read.
func makeSparse(t *testing.T, path string, head []byte, size int64) {
	t.Helper()
	if err := os.WriteFile(path, head, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// makeLines writes a text file of short numbered lines, about size bytes.
func makeLines(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var n int64
	for i := 1; n < size; i++ {
		k, _ := fmt.Fprintf(w, "lines.txt line %d\n", i)
		n += int64(k)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// vmHWM is the peak resident set size of process pid, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", rest, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}
