package sandbox

// A ChangeHook is told of the file changes of one command (Command.Changes)
// where the sandbox traps them: on Linux, in a cell (trap_linux.go).
// Elsewhere, or where the trap could not be set, Trapped is never called
// and Change is told nothing. Its methods are called from one goroutine
// at a time, for as long as the command runs (a Process's too, after the
// call that started it), and the command waits for them: they must be
// quick.
type ChangeHook interface {
	// Trapped is called once, before the command starts, when every
	// change of the command will be told.
	Trapped()
	// Change is called before the command creates, writes, truncates,
	// removes, renames (both names), links or changes the mode of the
	// file at path (absolute, below Command.Root).
	Change(path string)
}
