package daemon

import (
	"slices"
	"testing"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/sim"
)

// Every state the session client reports has its own wire name, and every
// wire name stands for a state.
func TestEveryStateHasAName(t *testing.T) {
	names := []string{rpc.WorkspaceConnecting, rpc.WorkspaceWarming, rpc.WorkspaceReady, rpc.WorkspaceStreaming,
		rpc.WorkspaceRewarming, rpc.WorkspaceHTTPFallback, rpc.WorkspaceClosed}
	seen := map[string]bool{}
	for _, st := range session.States {
		name, ok := stateNames[st]
		if !ok || !slices.Contains(names, name) || seen[name] {
			t.Errorf("state %d: name %q (known %v, taken already %v)", st, name, ok, seen[name])
		}
		seen[name] = true
	}
	if len(seen) != len(names) || len(stateNames) != len(session.States) {
		t.Errorf("%d states named, %d names, %d in the table", len(seen), len(names), len(stateNames))
	}
}

// A workspace's state and transport in status are the names rpc gives the
// status JSON (editors and scripts read them): on a WebSocket, and after
// the endpoint refused the upgrade (426) and the workspace went to HTTP.
func TestStatusStateNames(t *testing.T) {
	for _, tc := range []struct {
		name             string
		refuse           bool
		state, transport string
	}{
		{"websocket", false, rpc.WorkspaceReady, rpc.TransportWebSocket},
		{"http fallback", true, rpc.WorkspaceHTTPFallback, rpc.TransportHTTP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			td := startDaemon(t, sim.Options{}, "")
			if tc.refuse {
				td.sim.InjectFault(sim.Fault{Kind: sim.FaultRefuseUpgrade, Status: 426})
			}
			ed := td.connect()
			ed.initialize()
			ed.prompt(ed.newSession(td.root), "hi")
			st := td.d.Status()
			if len(st.Workspaces) != 1 {
				t.Fatalf("workspaces %+v", st.Workspaces)
			}
			if ws := st.Workspaces[0]; ws.State != tc.state || ws.Transport != tc.transport {
				t.Errorf("state %q, transport %q; want %q, %q", ws.State, ws.Transport, tc.state, tc.transport)
			}
		})
	}
}
