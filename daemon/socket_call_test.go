package daemon

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/hearthd/hearth/safesocket"
)

// The ancestry walk finds a running call's leader among a process's
// ancestors, stops at init and at the daemon, reads a chain again when a
// parent exits or its pid is reused under it, and fails — so the daemon
// refuses — when the process cannot be read at all.
func TestCallAncestor(t *testing.T) {
	const self = 100
	table := func(m map[int]safesocket.ProcInfo) func(int) (safesocket.ProcInfo, error) {
		return func(pid int) (safesocket.ProcInfo, error) {
			if p, ok := m[pid]; ok {
				return p, nil
			}
			return safesocket.ProcInfo{}, fs.ErrNotExist
		}
	}
	calls := map[int]bool{200: true}
	tree := map[int]safesocket.ProcInfo{
		1:   {PPID: 0, Start: 0},
		100: {PPID: 1, Start: 10},   // the daemon
		200: {PPID: 100, Start: 20}, // a call's helper
		201: {PPID: 200, Start: 21}, // its shell
		202: {PPID: 201, Start: 22}, // a command
		300: {PPID: 1, Start: 30},   // a setsid'd process of the user's
		301: {PPID: 300, Start: 31},
		400: {PPID: 100, Start: 40}, // an MCP server, the daemon's child
	}
	for _, c := range []struct {
		pid, want int
	}{{202, 200}, {201, 200}, {200, 200}, {301, 0}, {400, 0}, {self, 0}, {1, 0}} {
		got, err := callAncestor(c.pid, calls, self, table(tree))
		if err != nil || got != c.want {
			t.Errorf("process %d: call %d, %v; want %d", c.pid, got, err, c.want)
		}
	}
	if _, err := callAncestor(999, calls, self, table(tree)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a process that is gone: %v, want an error", err)
	}

	// 202's parent 201 exits between the two reads; 202 is reparented to
	// the helper (the call's subreaper) and the second walk finds it.
	reads := 0
	exiting := func(pid int) (safesocket.ProcInfo, error) {
		if pid == 202 {
			reads++
			if reads > 1 {
				return safesocket.ProcInfo{PPID: 200, Start: 22}, nil
			}
		}
		if pid == 201 {
			return safesocket.ProcInfo{}, fs.ErrNotExist
		}
		return table(tree)(pid)
	}
	if got, err := callAncestor(202, calls, self, exiting); err != nil || got != 200 {
		t.Errorf("a parent that exits mid-walk: call %d, %v; want 200", got, err)
	}

	// 201's pid now names a process that started after 202: not its parent.
	reused := map[int]safesocket.ProcInfo{}
	for k, v := range tree {
		reused[k] = v
	}
	reused[201] = safesocket.ProcInfo{PPID: 300, Start: 50}
	if _, err := callAncestor(202, calls, self, table(reused)); err == nil || !strings.Contains(err.Error(), "changed") {
		t.Errorf("a parent pid that was reused: %v, want the chain refused", err)
	}
}
