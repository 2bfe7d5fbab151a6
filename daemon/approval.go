package daemon

import (
	"github.com/hearthd/hearth/workspace/cmdsafe"
	"github.com/hearthd/hearth/workspace/sandbox"
)

// CommandRequest is one command a tool asks to run, as the permission
// decision reads it: shell's calls fill it, and so may any tool that runs
// a command line (exec_command). A plain value per call.
type CommandRequest struct {
	Command string // the sh command line, as the model gave it
	Workdir string // where it runs: absolute, the workspace root or below
	// Escalate: the model asked (sandbox_permissions "require_escalated")
	// to run this one command with more than the mode gives.
	Escalate      bool
	Justification string // the model's question for the user, shown when it asks
}

// CommandGrant is how an allowed command runs. A plain value per call.
type CommandGrant struct {
	Access sandbox.Access
	// Escalated: with the network whatever the mode (HEARTH_SHELL_NETWORK=off
	// aside) and AccessEscalated.
	Escalated bool
}

// Network is the network the command runs with under setting
// (HEARTH_SHELL_NETWORK) in a session now in mode.
func (g CommandGrant) Network(setting, mode string) sandbox.Network {
	if g.Escalated && setting != NetworkOff {
		return sandbox.Network{}
	}
	return shellNetwork(setting, mode)
}

// commandVerdict is what decideCommand says of one command before anyone
// is asked. A plain value.
type commandVerdict struct {
	refuse string       // non-empty: not run; the model reads this
	ask    bool         // the user is asked first
	grant  CommandGrant // how it runs (after a yes, when ask)
	// rules are the prefixes an "always allow" of it keeps
	// (cmdsafe.RulePrefixes); nil: none is offered.
	rules []string
}

// decideCommand is the permission decision for a command in a session of
// mode, given the workspace's command rules. It asks nobody and reads
// nothing: authorizeCommand does that around it.
//
//   - read-only runs no command.
//   - full-auto runs every command in the mode's sandbox without asking,
//     and refuses to escalate: nobody is there to agree, and the sandbox is
//     what makes running without asking safe.
//   - ask and auto-edit ask before every escalation, with the
//     justification; otherwise a command that only reads (cmdsafe.ReadOnly)
//     runs at once with no write at all, one every part of which a rule
//     covers runs at once in the mode's sandbox (a rule never widens it),
//     and the rest ask.
func decideCommand(mode string, req CommandRequest, rules []string) commandVerdict {
	switch mode {
	case ModeReadOnly:
		return commandVerdict{refuse: "the session is in read-only mode, so commands cannot run; tell the user what you would run, or ask them to switch modes"}
	case ModeFullAuto:
		if req.Escalate {
			return commandVerdict{refuse: "full-auto mode runs every command in its sandbox and asks nobody, so a command cannot run outside it; run it with sandbox_permissions \"use_default\", or tell the user what it needs"}
		}
		if cmdsafe.ReadOnly(req.Command) {
			// Run as a read (workspace.ReadOnlyCall): it must not write.
			return commandVerdict{grant: CommandGrant{Access: sandbox.AccessReadOnly}}
		}
		return commandVerdict{}
	}
	if req.Escalate {
		return commandVerdict{ask: true, grant: CommandGrant{Access: sandbox.AccessEscalated, Escalated: true}}
	}
	if cmdsafe.ReadOnly(req.Command) {
		return commandVerdict{grant: CommandGrant{Access: sandbox.AccessReadOnly}}
	}
	if cmdsafe.Covered(req.Command, rules) {
		return commandVerdict{}
	}
	prefixes, _ := cmdsafe.RulePrefixes(req.Command)
	return commandVerdict{ask: true, rules: prefixes}
}
