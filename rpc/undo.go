package rpc

// UndoParams names the session _hearth/undo undoes a turn of: its id or a
// unique prefix. DryRun asks what an undo would do, changing nothing.
type UndoParams struct {
	SessionID string `json:"sessionId"`
	DryRun    bool   `json:"dryRun,omitempty"`
}

// UndoResult is _hearth/undo's answer. Built per call.
type UndoResult struct {
	SessionID string   `json:"sessionId"`
	Undone    bool     `json:"undone"`              // a turn was undone; false: none was left
	Restored  []string `json:"restored,omitempty"`  // files put back as they were before the turn
	Removed   []string `json:"removed,omitempty"`   // files the turn created, removed
	Conflicts []string `json:"conflicts,omitempty"` // files changed since the turn, left as they are
	// ConflictDiffs says what differs in each conflict: a unified diff of
	// what the turn left against what is there now, bounded.
	ConflictDiffs []ConflictDiff `json:"conflictDiffs,omitempty"`
	Failed        []string       `json:"failed,omitempty"` // files that could not be put back: "path: why"
	Message       string         `json:"message"`          // what happened, in a few words for the user

	// NotRestorable names the files the turn changed whose content before
	// was not kept (too big, or changed by a command the sandbox could not
	// trap): left as they are.
	NotRestorable []string `json:"notRestorable,omitempty"`
}
