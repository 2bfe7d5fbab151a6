package daemon

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/workspace/sandbox"
)

// TestShellNetworkFollowsMode: through the real daemon and the real sandbox
// helper, one session's shell command connects to a TCP listener the test
// holds in ask mode (approved) and cannot in full-auto, where the model is
// told why; the modes offered say so. Where this machine cannot take the
// network away, full-auto's description says that, and the command connects.
func TestShellNetworkFollowsMode(t *testing.T) {
	useSandboxHelper(t)
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 4)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			got <- strings.TrimSpace(line)
		}
	}()
	t.Cleanup(func() { l.Close(); <-done })
	next := func() string {
		t.Helper()
		select {
		case s := <-got:
			return s
		case <-time.After(10 * time.Second):
			t.Fatal("the listener accepted nothing within 10 s")
			return ""
		}
	}

	td := startDaemon(t, sim.Options{}, "")
	a := &asker{answers: []string{"allow_once"}}
	ed := td.connectAnswering(a.onCall)
	ed.initialize()
	var ns acp.NewSessionResponse
	ed.must(rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: td.root, McpServers: []acp.McpServer{}}, &ns)
	enforced, why := sandbox.NetworkEnforced()
	for _, m := range ns.Modes.AvailableModes {
		want := map[string]string{
			ModeAsk:      "Commands have the network.",
			ModeFullAuto: "Commands have no network (HEARTH_SHELL_NETWORK=on gives it).",
		}[string(m.Id)]
		if !enforced && m.Id == ModeFullAuto {
			want = "cannot take it from them (" + why + ")."
		}
		if want != "" && !strings.HasSuffix(*m.Description, want) {
			t.Errorf("mode %s: %q, want the suffix %q", m.Id, *m.Description, want)
		}
	}

	prompt := `run sim:calls=1 sim:tool=shell sim:args={"command":"` + mustCommandExe(t) + `\u0020` + dialSubcommand + `\u0020` + l.Addr().String() + `"}`
	ed.prompt(ns.SessionId, prompt)
	if out := lastToolOutput(t, td); a.asked() != 1 || !strings.HasPrefix(commandOutput(out), "connected\n") {
		t.Fatalf("ask mode, approved: asked %d, output %q", a.asked(), out)
	}
	if s := next(); s != "sandboxed" {
		t.Errorf("ask mode: the listener got %q", s)
	}

	ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: ns.SessionId, ModeId: ModeFullAuto}, nil)
	ed.prompt(ns.SessionId, prompt)
	out := lastToolOutput(t, td)
	if !enforced {
		if !strings.HasPrefix(commandOutput(out), "connected\n") || next() != "sandboxed" {
			t.Errorf("the network cannot be taken away here (%s), yet full-auto's command: %q", why, out)
		}
		return
	}
	if !strings.HasPrefix(commandOutput(out), "dial: ") || !strings.HasSuffix(out, "[the network is off for commands in full-auto mode: connections and listening sockets fail; the user can allow it with another mode or HEARTH_SHELL_NETWORK=on]") {
		t.Errorf("full-auto: output %q", out)
	}
	// The test's own connection is the next the listener sees: the
	// sandboxed one never came through.
	c, err := net.Dial("tcp4", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("probe\n"))
	c.Close()
	if s := next(); s != "probe" {
		t.Errorf("full-auto: the listener got %q before the probe", s)
	}
}
