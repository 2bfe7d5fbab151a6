package daemon

import (
	"fmt"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/hearthd/hearth/workspace/sandbox"
)

// dialSubcommand makes this test binary connect to a TCP address and send
// one line: what a sandboxed command runs to try the network.
const dialSubcommand = "__dial"

func dialProbe(addr string) int {
	c, err := net.Dial("tcp", addr)
	if err == nil {
		_, err = fmt.Fprintln(c, "sandboxed")
		c.Close()
	}
	if err != nil {
		fmt.Println("dial:", err)
		return 1
	}
	fmt.Println("connected")
	return 0
}

// useSandboxHelper makes the shell tool of this process run its commands
// through this test binary's helper until the test ends, letting commands
// reach allowSockets (HEARTH_SANDBOX_SOCKETS).
func useSandboxHelper(t *testing.T, allowSockets ...string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sandbox.Set(sandbox.Config{Helper: []string{exe, sandboxSubcommand}, Sockets: allowSockets})
	t.Cleanup(func() { sandbox.Set(sandbox.Config{}) })
}

// TestShellNetworkMapping: HEARTH_SHELL_NETWORK=mode follows the modes'
// defaults (off in read-only and full-auto, on in ask and auto-edit, an
// unknown mode as ask); on and off override every mode.
func TestShellNetworkMapping(t *testing.T) {
	for _, tt := range []struct {
		setting, mode string
		off           bool
		why           string
	}{
		{"", ModeReadOnly, true, "read-only mode"},
		{"", ModeAsk, false, ""},
		{"", ModeAutoEdit, false, ""},
		{"", ModeFullAuto, true, "full-auto mode"},
		{"", "yolo", false, ""},
		{NetworkMode, ModeFullAuto, true, "full-auto mode"},
		{NetworkMode, ModeAsk, false, ""},
		{NetworkOn, ModeFullAuto, false, ""},
		{NetworkOn, ModeReadOnly, false, ""},
		{NetworkOff, ModeAsk, true, "this daemon (HEARTH_SHELL_NETWORK=off)"},
		{NetworkOff, ModeAutoEdit, true, "this daemon (HEARTH_SHELL_NETWORK=off)"},
	} {
		got := shellNetwork(tt.setting, tt.mode)
		if got.Off != tt.off || got.Why != tt.why {
			t.Errorf("shellNetwork(%q, %q) = %+v, want off=%v why=%q", tt.setting, tt.mode, got, tt.off, tt.why)
		}
	}
}

func TestParseShellNetwork(t *testing.T) {
	for in, want := range map[string]string{"": NetworkMode, "mode": NetworkMode, " on ": NetworkOn, "off": NetworkOff} {
		if got, err := parseShellNetwork(in); err != nil || got != want {
			t.Errorf("parseShellNetwork(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"yes", "ON", "false", "auto"} {
		_, err := parseShellNetwork(bad)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("HEARTH_SHELL_NETWORK=%q: want on, off or mode", bad)) {
			t.Errorf("parseShellNetwork(%q) = %v", bad, err)
		}
	}
}

// TestModeDescriptionsSayNetwork: each mode that runs commands says whether
// they have the network; where it cannot be taken away (no sandbox helper
// in this process), full-auto says so instead of pretending.
func TestModeDescriptionsSayNetwork(t *testing.T) {
	desc := func(setting string) map[string]string {
		out := map[string]string{}
		for _, m := range sessionModes(setting) {
			out[string(m.Id)] = *m.Description
		}
		return out
	}
	sandbox.Set(sandbox.Config{})
	d := desc("")
	if want := "Commands should have no network, but this machine cannot take it from them (shell commands run without the sandbox helper)."; !strings.HasSuffix(d[ModeFullAuto], want) {
		t.Errorf("full-auto without a helper: %q", d[ModeFullAuto])
	}
	for _, m := range []string{ModeAsk, ModeAutoEdit} {
		if !strings.HasSuffix(d[m], "Commands have the network.") {
			t.Errorf("%s: %q", m, d[m])
		}
	}
	if strings.Contains(d[ModeReadOnly], "network") {
		t.Errorf("read-only runs no command, yet: %q", d[ModeReadOnly])
	}
	if d := desc(NetworkOn); !strings.HasSuffix(d[ModeFullAuto], "Commands have the network.") {
		t.Errorf("HEARTH_SHELL_NETWORK=on, full-auto: %q", d[ModeFullAuto])
	}
	if *modes[3].Description != "Edits and commands run without asking." {
		t.Errorf("sessionModes changed the shared modes: %q", *modes[3].Description)
	}

	useSandboxHelper(t)
	d = desc(NetworkOff)
	enforced, why := sandbox.NetworkEnforced()
	for _, m := range []string{ModeAsk, ModeAutoEdit, ModeFullAuto} {
		if enforced && !strings.HasSuffix(d[m], "Commands have no network (HEARTH_SHELL_NETWORK=on gives it).") ||
			!enforced && !strings.Contains(d[m], "cannot take it from them ("+why+")") {
			t.Errorf("HEARTH_SHELL_NETWORK=off, %s (enforced %v): %q", m, enforced, d[m])
		}
	}
}
