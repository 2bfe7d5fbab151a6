package daemon

import (
	"fmt"
	"strings"

	"github.com/hearthd/hearth/workspace/sandbox"
)

// HEARTH_SHELL_NETWORK: whether the shell tool's commands have the network.
const (
	NetworkOn   = "on"   // in every mode
	NetworkOff  = "off"  // in no mode
	NetworkMode = "mode" // by the session's mode (modeNetwork); the default
)

// modeNetwork is whether a mode's commands have the network under
// HEARTH_SHELL_NETWORK=mode. Where a person approves each command (ask,
// auto-edit) they have it: builds fetch modules, tests reach services, and
// the person sees the curl before it runs. In full-auto nobody sees a
// command before it runs, and a command reads all your files but hearth's
// (~/.ssh included), so the network is what would carry them away: it is off,
// as a prompt injected through a file could otherwise exfiltrate at will.
// read-only runs no command; off, should that change.
var modeNetwork = map[string]bool{
	ModeReadOnly: false,
	ModeAsk:      true,
	ModeAutoEdit: true,
	ModeFullAuto: false,
}

// parseShellNetwork reads HEARTH_SHELL_NETWORK ("" is mode).
func parseShellNetwork(v string) (string, error) {
	switch v = strings.TrimSpace(v); v {
	case "":
		return NetworkMode, nil
	case NetworkOn, NetworkOff, NetworkMode:
		return v, nil
	}
	return "", fmt.Errorf("HEARTH_SHELL_NETWORK=%q: want on, off or mode (the per-mode defaults: off in read-only and full-auto, on in ask and auto-edit)", v)
}

// shellNetwork is the network of one shell call in a session of mode,
// under setting (Config.ShellNetwork; "" is mode). An unknown mode is
// treated as the default, ask.
func shellNetwork(setting, mode string) sandbox.Network {
	switch setting {
	case NetworkOn:
		return sandbox.Network{}
	case NetworkOff:
		return sandbox.Network{Off: true, Why: "this daemon (HEARTH_SHELL_NETWORK=off)"}
	}
	if !validMode(mode) {
		mode = ModeAsk
	}
	if modeNetwork[mode] {
		return sandbox.Network{}
	}
	return sandbox.Network{Off: true, Why: mode + " mode"}
}

// networkNote is what a mode's description says of its commands' network,
// as this process enforces it ("" for read-only, which runs no command).
func networkNote(setting, mode string) string {
	if mode == ModeReadOnly {
		return ""
	}
	if !shellNetwork(setting, mode).Off {
		return " Commands have the network."
	}
	if ok, why := sandbox.NetworkEnforced(); !ok {
		return " Commands should have no network, but this machine cannot take it from them (" + why + ")."
	}
	return " Commands have no network (HEARTH_SHELL_NETWORK=on gives it)."
}

// ShellNetworkSummary says what setting (Config.ShellNetwork) gives each
// mode's commands, for `hearth doctor`.
func ShellNetworkSummary(setting string) string {
	switch setting {
	case NetworkOn:
		return "HEARTH_SHELL_NETWORK=on: commands have the network in every mode"
	case NetworkOff:
		return "HEARTH_SHELL_NETWORK=off: commands have no network in any mode"
	}
	var on, off []string
	for _, m := range modes {
		if modeNetwork[string(m.Id)] {
			on = append(on, string(m.Id))
		} else {
			off = append(off, string(m.Id))
		}
	}
	return "HEARTH_SHELL_NETWORK=mode: commands have no network in " + strings.Join(off, " and ") + ", the network in " + strings.Join(on, " and ")
}
