package workspace

import (
	"encoding/json"

	"github.com/hearthd/hearth/workspace/cmdsafe"
)

// ReadOnlyCall reports whether the call name(args) only reads: a call of a
// read-only tool, or a shell call whose command cmdsafe knows to only read
// (cmdsafe.ReadOnly), asking no escalation. Such calls change nothing, so
// the daemon runs them as reads: side by side, from before the response
// that made them has ended, committed with the next request; such a
// command runs with the workspace read-only (sandbox.AccessReadOnly) in
// every mode, so that what cmdsafe judged holds in the sandbox too.
func ReadOnlyCall(name string, args json.RawMessage) bool {
	d := findTool(name)
	switch {
	case d == nil:
		return false
	case d.ReadOnly:
		return true
	case name != shellDef.Name:
		return false
	}
	command, _, esc, msg := planShell(d, args)
	return msg == "" && !esc.Escalate && cmdsafe.ReadOnly(command)
}
