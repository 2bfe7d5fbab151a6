package rpc

// RewindParams names the session _hearth/rewind takes back (its id or a
// unique prefix) and the prompt turn to go back to before: N counts the
// session's prompts that ran as model turns, from 1, rewound ones
// included; 0 lists the turns only.
type RewindParams struct {
	SessionID string `json:"sessionId"`
	Turn      int    `json:"turn,omitempty"`
}

// RewindTurn is one prompt turn _hearth/rewind lists. Built per call.
type RewindTurn struct {
	Turn    int    `json:"turn"`
	Prompt  string `json:"prompt"`  // the prompt's first line, at most 80 characters
	Files   int    `json:"files"`   // files its checkpoint changed
	Rewound bool   `json:"rewound"` // a rewind took it out of the model's view
	// Paths names the files counted in Files, in the order first changed:
	// at most MaxRewindPaths of them.
	Paths []string `json:"paths,omitempty"`
}

// MaxRewindPaths bounds RewindTurn.Paths.
const MaxRewindPaths = 50

// ConflictDiff is what differs in a file an undo or rewind left as it is:
// a unified diff of what the turn left against what is there now, bounded.
type ConflictDiff struct {
	Path string `json:"path"`
	Diff string `json:"diff"`
}

// RewindResult is _hearth/rewind's answer. Built per call.
type RewindResult struct {
	SessionID     string         `json:"sessionId"`
	Turns         []RewindTurn   `json:"turns,omitempty"` // when listing
	Rewound       bool           `json:"rewound"`         // the session was taken back
	Restored      []string       `json:"restored,omitempty"`
	Removed       []string       `json:"removed,omitempty"`
	Conflicts     []string       `json:"conflicts,omitempty"`
	ConflictDiffs []ConflictDiff `json:"conflictDiffs,omitempty"`
	Failed        []string       `json:"failed,omitempty"`
	NotRestorable []string       `json:"notRestorable,omitempty"`
	Message       string         `json:"message"`
}
