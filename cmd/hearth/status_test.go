package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
)

// After one turn in a fresh workspace, with one editor attached:
// `status --json` names the model the requests use (HEARTH_MODEL unset: the
// default), counts that editor but not the status call, and reports no
// negative bytes saved; the table says "1 workspace".
func TestStatusAfterOneTurn(t *testing.T) {
	dir := isolate(t)
	daemon := serveInProcess(t)
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "proj")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("unix", cfg.Socket)
	if err != nil {
		t.Fatal(err)
	}
	if text := newACP(t, conn).turn(t, root, "hi there"); !strings.Contains(text, "hi there") {
		t.Fatalf("answer %q", text)
	}

	code, out, errOut := runCLI("status", "--json")
	if code != 0 {
		t.Fatalf("status --json: exit %d, %s", code, errOut)
	}
	var st rpc.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if st.Model != session.DefaultModel {
		t.Errorf("model %q, want %q (the model the requests use)", st.Model, session.DefaultModel)
	}
	if st.Clients != 1 {
		t.Errorf("clients %d, want 1: the editor, not the status call itself", st.Clients)
	}
	if len(st.Workspaces) != 1 {
		t.Fatalf("workspaces %+v", st.Workspaces)
	}
	ws := st.Workspaces[0]
	if ws.Model != session.DefaultModel || ws.BytesSaved < 0 || ws.IncrementalRequests == 0 {
		t.Errorf("workspace model %q, %d bytes saved by %d incremental requests", ws.Model, ws.BytesSaved, ws.IncrementalRequests)
	}

	daemon.waitGone(t) // the first status call's connection
	code, out, errOut = runCLI("status")
	if code != 0 {
		t.Fatalf("status: exit %d, %s", code, errOut)
	}
	// A terminal's 80 columns hold every line; the workspace's figures are
	// there, in words.
	for _, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > statusWidth && !strings.Contains(l, root) {
			t.Errorf("a line of %d columns:\n%s", n, l)
		}
	}
	for _, want := range []string{`^` + regexp.QuoteMeta(root) + `$`, `^  requests: 1 handshake, \d+ warm-ups?, \d+ full, [1-9]\d* incremental, 0 retried$`,
		`^  sent [0-9.]+ [KM]?i?B \([0-9.]+ [KM]?i?B on the wire\), saved`, `^  rate limits: \d+/5000 requests, \d+k/800k tokens left(; whole again at \d\d:\d\d:\d\d)?$`, `^profile +gpt-5\.x-codex: window 272,000 tokens, reasoning medium \(of low,$`} {
		if !regexp.MustCompile(`(?m)` + want).MatchString(out) {
			t.Errorf("status lacks a line %s:\n%s", want, out)
		}
	}
	daemon.waitGone(t) // the status call's connection above
	code, out, errOut = runCLI("status", "--wide")
	if code != 0 {
		t.Fatalf("status --wide: exit %d, %s", code, errOut)
	}
	if !strings.Contains(out, "INCREMENTAL") {
		t.Errorf("status --wide has no table:\n%s", out)
	}
	for _, want := range []string{`model +` + session.DefaultModel,
		`profile +gpt-5\.x-codex: window 272,000 tokens, reasoning medium \(of low, medium, high, xhigh\), images, parallel tool calls, tool output up to 10,000 tokens, apply_patch \(freeform\)`,
		`clients +1`, `workspaces +1 workspace open, 0 closed after being idle`, `sessions +1 session open \(0 idle\), 0 closed \(idle, or by their editors\)`} {
		if !regexp.MustCompile(`(?m)^` + want + `$`).MatchString(out) {
			t.Errorf("status lacks a line %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "(s)") || regexp.MustCompile(` -\d`).MatchString(out) {
		t.Errorf("status has a (s) or a negative figure:\n%s", out)
	}
	// doctor counts the same way.
	_, out, _ = runCLI("doctor", "--json")
	if !strings.Contains(out, "pid "+strconv.Itoa(os.Getpid())+", 1 workspace open") {
		t.Errorf("doctor's daemon check: %s", out)
	}
}

// plural counts with the right noun.
// The table names a workspace whose watching is degraded, with the why and
// the fix the daemon gives, and says nothing of one watched as it should be.
func TestPrintStatusWatch(t *testing.T) {
	polling := "polling: cannot watch /p for changes: the inotify watch limit is reached; run `sudo sysctl fs.inotify.max_user_watches=524288`"
	st := rpc.Status{Workspaces: []rpc.WorkspaceStatus{{Root: "/p", Watch: polling}, {Root: "/q", Watch: "inotify"}}}
	var b strings.Builder
	printStatus(&b, st, true)
	if !strings.Contains(b.String(), "/p: file watching is "+polling+"\n") {
		t.Errorf("the degraded workspace is not named:\n%s", b.String())
	}
	if strings.Contains(b.String(), "/q: file watching") {
		t.Errorf("a workspace watched by inotify is reported:\n%s", b.String())
	}
	b.Reset()
	printStatus(&b, st, false) // wrapped to 80 columns, the same words
	if got := strings.Join(strings.Fields(b.String()), " "); !strings.Contains(got, "/p: file watching is "+polling) {
		t.Errorf("the degraded workspace is not named when wrapped:\n%s", b.String())
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if utf8.RuneCountInString(l) > statusWidth {
			t.Errorf("a line over %d columns: %q", statusWidth, l)
		}
	}
}

// A profile with no known window and no reasoning says so.
func TestProfileLine(t *testing.T) {
	got := profileLine(rpc.Profile{Family: "unknown", Reasoning: "none", ToolOutputTokens: 1234567})
	want := "unknown: window unknown (compacts when the API refuses a request for its length), no reasoning, tool output up to 1,234,567 tokens"
	if got != want {
		t.Fatalf("profileLine = %q\nwant %q", got, want)
	}
}

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 workspaces", 1: "1 workspace", 2: "2 workspaces"} {
		if got := plural(n, "workspace"); got != want {
			t.Errorf("plural(%d) = %q, want %q", n, got, want)
		}
	}
}
