package daemon

import (
	"context"
	"encoding/json"

	"github.com/hearthd/hearth/rpc"
)

// listProcesses answers _hearth/processes: the processes the session's
// exec_command calls left running; none for a session that is not open
// (closing a session ends them).
func listProcesses(d *Daemon) handler {
	return func(_ context.Context, params json.RawMessage) (any, error) {
		var p rpc.ProcessesParams
		if err := rpc.DecodeParams(params, &p); err != nil {
			return nil, err
		}
		res := rpc.ProcessesResult{Processes: []rpc.ProcessInfo{}}
		s := openNow(d, p.SessionID)
		if s == nil {
			return res, nil
		}
		for _, i := range s.procs.List() {
			res.Processes = append(res.Processes, rpc.ProcessInfo{ProcessID: i.ID, Command: i.Command, TTY: i.TTY, StartedAt: i.Started, Running: i.Running})
		}
		return res, nil
	}
}

// killProcess answers _hearth/process/kill: it ends the process and
// everything it started, and answers once they have ended. The model
// learns of it when it next writes to the process: it is gone.
func killProcess(d *Daemon) handler {
	return func(_ context.Context, params json.RawMessage) (any, error) {
		var p rpc.ProcessKillParams
		if err := rpc.DecodeParams(params, &p); err != nil {
			return nil, err
		}
		s := openNow(d, p.SessionID)
		if s == nil || !s.procs.Kill(p.ProcessID) {
			return nil, rpc.InvalidParams("processId", "no process %d in session %s; _hearth/processes lists them", p.ProcessID, p.SessionID)
		}
		return rpc.ProcessKillResult{Killed: true}, nil
	}
}

// openNow is the open session id, or nil: it opens nothing.
func openNow(d *Daemon, id string) *openSession {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sessions[id]
}
