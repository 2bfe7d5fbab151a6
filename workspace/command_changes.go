package workspace

import (
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/hearthd/hearth/workspace/sandbox"
)

// CommandChanges is what the calls of shell, exec_command and write_stdin
// tell of the files their commands change, for a checkpoint
// (Toolset.Commands). Its methods may be called from several goroutines.
type CommandChanges interface {
	// Before is called before a command creates, writes, removes, renames
	// (both names), links or changes the mode of rel (relative to the
	// root, slash-separated, never in a .git directory), where the sandbox
	// traps the command: from the trap's goroutine, while the command
	// waits, for as long as the command runs (an exec_command's process
	// too, after its call returned).
	Before(rel string)
	// Begin is called as a call is about to run or feed a command; the
	// end it returns, when the call returns, trapped saying whether
	// Before was told every change the command made (false: the sandbox
	// could not trap it, and what it changed must be found another way).
	Begin() (end func(trapped bool))
}

// commandHook turns a sandbox's absolute paths into the workspace's for
// CommandChanges. One per command; it lives as long as the command.
type commandHook struct {
	root    string
	cc      CommandChanges
	trapped atomic.Bool
}

// newCommandHook is the hook of one command of ts's call, or nil when
// the call keeps no checkpoint.
func newCommandHook(ts *Toolset) *commandHook {
	if ts.Commands == nil {
		return nil
	}
	return &commandHook{root: ts.at.root.Path(), cc: ts.Commands}
}

// changes is h as the sandbox takes it: nil when h is.
func (h *commandHook) changes() sandbox.ChangeHook {
	if h == nil {
		return nil
	}
	return h
}

func (h *commandHook) Trapped() { h.trapped.Store(true) }

func (h *commandHook) Change(path string) {
	rel, err := filepath.Rel(h.root, path)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") || sandbox.HasGitComponent(rel) {
		return // outside the workspace, or the repository's own: never the turn's to undo
	}
	h.cc.Before(filepath.ToSlash(rel))
}

// beginCommand tells ts.Commands a call starts; the function it returns
// tells it the call ended, for the command of hook h (nil: none was run).
func beginCommand(ts *Toolset, h *commandHook) func() {
	if ts.Commands == nil {
		return func() {}
	}
	end := ts.Commands.Begin()
	return func() { end(h != nil && h.trapped.Load()) }
}
