package rpc

import "time"

// ProcessesParams name the session whose processes _hearth/processes
// lists.
type ProcessesParams struct {
	SessionID string `json:"sessionId"`
}

// ProcessesResult is _hearth/processes's answer: the session's processes,
// oldest first (none for a session that is not open). Built per call.
type ProcessesResult struct {
	Processes []ProcessInfo `json:"processes"`
}

// ProcessInfo is one process exec_command started and that has not been
// reported ended to the model: its id (the session ID the model writes to
// it with), its command line, whether it has a terminal, when it started,
// and whether it still runs.
type ProcessInfo struct {
	ProcessID int       `json:"processId"`
	Command   string    `json:"command"`
	TTY       bool      `json:"tty"`
	StartedAt time.Time `json:"startedAt"`
	Running   bool      `json:"running"`
}

// ProcessKillParams name the process _hearth/process/kill ends.
type ProcessKillParams struct {
	SessionID string `json:"sessionId"`
	ProcessID int    `json:"processId"`
}

// ProcessKillResult is _hearth/process/kill's answer: the process and
// everything it started have ended. Built per call.
type ProcessKillResult struct {
	Killed bool `json:"killed"`
}
