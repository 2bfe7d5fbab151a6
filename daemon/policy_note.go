package daemon

import (
	"strings"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/workspace/sandbox"
)

// The permissions message tells the model its session's mode, in the
// framing its family learned (<permissions instructions>, a developer
// message: hearth's word, over what a file or a message claims): what
// runs without asking, what asks the user first, what is refused, the
// commands' sandbox and network, and the mode's validation policy — how
// to check the work when every command asks, when none does, or when none
// may run. It is sent with the session's first items and again whenever
// the mode or what it allows changes (environment.go says how).

// The permissions message's first and last lines.
const (
	policyOpen  = "<permissions instructions>"
	policyClose = "</permissions instructions>"
)

// policy is what one permissions message says; a value built for one
// prompt.
type policy struct {
	mode    string
	network string // Config.ShellNetwork
	root    string // the workspace root
}

// policyOf is the policy of a session of mode in the workspace at root,
// under cfg.
func policyOf(cfg Config, root, mode string) policy {
	if !validMode(mode) {
		mode = ModeAsk
	}
	return policy{mode: mode, network: cfg.ShellNetwork, root: root}
}

// text is the message.
func (p policy) text() string {
	var b strings.Builder
	b.WriteString(policyOpen + "\n")
	b.WriteString("Approval mode: `" + p.mode + "`. " + p.approvals() + "\n")
	if p.mode != ModeReadOnly {
		b.WriteString(p.sandbox() + "\n")
	}
	b.WriteString("Validation: " + validationPolicy[p.mode] + "\n")
	b.WriteString(policyClose)
	return b.String()
}

// approvals says what runs, what asks and what is refused.
func (p policy) approvals() string {
	switch p.mode {
	case ModeReadOnly:
		return "Reads and searches run; edits, commands and MCP tools that are not read-only are refused: do not try them, " +
			"and do not ask the user to change the mode unless the task cannot be done without it."
	case ModeAutoEdit:
		return "Reads and edits inside the workspace run without asking; commands and MCP tools that are not read-only ask the user first, " +
			"who may decline."
	case ModeFullAuto:
		return "Reads, edits, commands and MCP tools all run without asking: nobody reviews an action before it runs, " +
			"so take the same care you would if they did."
	}
	return "Reads run without asking; edits, and commands and MCP tools that may change something, ask the user first, who may decline " +
		"(a command that only reads may run without asking). A declined action stays declined: ask what they would like instead."
}

// sandbox says where commands may write and whether they have the network.
func (p policy) sandbox() string {
	var s string
	if dirs := sandbox.CommandWrites(p.root); dirs != nil {
		s = "Sandbox: commands may write only in the writable roots of the environment context; a write elsewhere fails."
	} else {
		s = "Sandbox: none on this machine; commands may write wherever the user can, so keep them to the workspace."
	}
	net := shellNetwork(p.network, p.mode)
	switch ok, _ := sandbox.NetworkEnforced(); {
	case !net.Off:
		s += " Network: enabled."
	case ok:
		s += " Network: restricted — no address is reachable, localhost included: a download, a package install or a test that needs a service fails."
	default:
		s += " Network: should be restricted, but this machine cannot take it from commands; do not use it."
	}
	return s
}

// validationPolicy is how the model checks its work in each mode.
var validationPolicy = map[string]string{
	ModeReadOnly: "you cannot run tests or builds in this mode. Say which checks you would run (the commands) " +
		"and what they should show, and reason carefully about the change instead.",
	ModeAsk: "a command that may change something is the user's decision, so make each one count: run the narrowest check that covers the change " +
		"(one test, one package's build), then a wider one once before you finish; group checks into one command " +
		"rather than many. If a check is declined, say what you did not verify.",
	ModeAutoEdit: "commands ask the user first while edits do not: make your edits, then run the checks that cover them " +
		"in few commands (the narrowest test first, a wider build or test run once at the end). If a check is declined, " +
		"say what you did not verify.",
	ModeFullAuto: "nothing asks first, so check proactively: run the tests, build and linters that cover your change, " +
		"fix what your change broke and run them again until they pass, before you hand the work back. Add a test " +
		"where the change has none and the area has a suite.",
}

// toldAlready reports whether the latest message of conv's model's view
// that begins with open says text.
func toldAlready(conv *session.Conversation, open, text string) bool {
	told, _ := conv.Told(open)
	return told == text
}
