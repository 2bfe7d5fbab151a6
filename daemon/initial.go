package daemon

import "encoding/json"

// initialContext is what a new session working in cwd (absolute, in w)
// begins with, before its warm-up: the AGENTS.md files that apply there
// (agents.go). A spare is handed out only to a session/new whose initial
// context is the spare's.
func initialContext(w *openWorkspace, cwd string) []json.RawMessage {
	_, dir := sessionDir(w.root.Path(), cwd)
	return agentsContext(w.root, dir)
}
