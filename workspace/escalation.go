package workspace

import "fmt"

// The two parameters a command tool takes to ask for more than the mode
// gives one command, named as the model families trained on them know
// them: sandbox_permissions and justification.
const (
	UseDefault       = "use_default"
	RequireEscalated = "require_escalated"
)

// EscalationParams is the JSON Schema of the two parameters, for a command
// tool's properties (shell's; exec_command's too).
const EscalationParams = `"sandbox_permissions":{"type":"string","enum":["use_default","require_escalated"],"description":"use_default (the default) runs the command in the session's sandbox. require_escalated asks the user to run this one command outside it: with the network, and able to write outside the workspace. Ask only when the command needs that (it failed in the sandbox, or plainly must write elsewhere or reach the network), and give a justification."},` +
	`"justification":{"type":"string","description":"With require_escalated only: one short question for the user that says what the command is for in the task, e.g. \"Allow npm install to download the project's dependencies?\" It is shown in the permission prompt."}`

// escalation is the two parameters as decoded from a call's arguments.
type escalation struct {
	SandboxPermissions *string `json:"sandbox_permissions"`
	Justification      *string `json:"justification"`
}

// Escalation is whether one command asks for more than the mode gives it,
// and why (the model's words, for the permission prompt). A plain value.
type Escalation struct {
	Escalate      bool
	Justification string
}

// check turns the decoded parameters into an Escalation, or a message for
// the model.
func (e escalation) check() (Escalation, string) {
	var out Escalation
	if e.SandboxPermissions != nil {
		switch *e.SandboxPermissions {
		case UseDefault, "":
		case RequireEscalated:
			out.Escalate = true
		default:
			return Escalation{}, fmt.Sprintf("sandbox_permissions must be %q or %q, not %q", UseDefault, RequireEscalated, *e.SandboxPermissions)
		}
	}
	if e.Justification != nil {
		out.Justification = *e.Justification
	}
	return out, ""
}
