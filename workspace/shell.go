package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hearthd/hearth/workspace/sandbox"
)

const (
	defaultShellTimeoutMS = 120_000 // when the model gives no timeout_ms
	maxShellTimeoutMS     = 600_000
)

var shellDef = toolDef{
	Tool: Tool{
		Name:        "shell",
		Description: "Run a command with /bin/sh -c in the working directory. Returns stdout and stderr combined, and the exit code. Stdin is empty; processes left in the background are killed when the command exits.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"command":{"type":"string","description":"The shell command line."},` +
			`"timeout_ms":{"type":"integer","minimum":1,"maximum":600000,"description":"Kill the command after this many milliseconds. Default 120000."},` +
			EscalationParams +
			`},"required":["command"],"additionalProperties":false}`),
		Kind:     "execute",
		ReadOnly: false,
	},
	fields:  []string{"command", "timeout_ms", "sandbox_permissions", "justification"},
	example: `{"command":"go test ./...","timeout_ms":300000}`,
	run:     (*Toolset).shell,
	preview: (*Toolset).previewShell,
}

type shellArgs struct {
	Command   *string `json:"command"`
	TimeoutMS *int    `json:"timeout_ms"`
	escalation
}

// planShell checks a shell call. A non-empty msg is the error for the model.
func planShell(d *toolDef, raw json.RawMessage) (command string, timeoutMS int, esc Escalation, msg string) {
	command, timeoutMS, a, msg := planShellArgs(d, raw)
	if msg != "" {
		return "", 0, Escalation{}, msg
	}
	if esc, msg = a.escalation.check(); msg != "" {
		return "", 0, Escalation{}, msg
	}
	return command, timeoutMS, esc, ""
}

// planShellArgs decodes and checks a shell call's command and timeout.
func planShellArgs(d *toolDef, raw json.RawMessage) (command string, timeoutMS int, a shellArgs, msg string) {
	if msg := decodeArgs(d, raw, &a); msg != "" {
		return "", 0, a, msg
	}
	if a.Command == nil {
		return "", 0, a, missingArg(d, "command").Output
	}
	if strings.TrimSpace(*a.Command) == "" {
		return "", 0, a, `command is empty; give a shell command line, e.g. {"command":"ls -la"}`
	}
	timeoutMS = defaultShellTimeoutMS
	if a.TimeoutMS != nil {
		if *a.TimeoutMS < 1 || *a.TimeoutMS > maxShellTimeoutMS {
			return "", 0, a, fmt.Sprintf("timeout_ms must be between 1 and %d (10 minutes), not %d", maxShellTimeoutMS, *a.TimeoutMS)
		}
		timeoutMS = *a.TimeoutMS
	}
	if sandbox.Unsupported != "" {
		return "", 0, a, sandbox.Unsupported
	}
	return *a.Command, timeoutMS, a, ""
}

func (ts *Toolset) previewShell(ctx context.Context, d *toolDef, raw json.RawMessage) (Preview, string) {
	if p, msg, ok := ts.previewShellPatch(ctx, raw); ok {
		return p, msg
	}
	command, _, esc, msg := planShell(d, raw)
	if msg != "" {
		return Preview{}, msg
	}
	return Preview{Title: commandTitle(command), Command: command, Escalation: esc}, ""
}

func (ts *Toolset) shell(ctx context.Context, d *toolDef, raw json.RawMessage) Result {
	if res, ok := ts.shellAsPatch(ctx, raw); ok {
		return res // patch_shell.go: applied as apply_patch, nothing run
	}
	command, timeoutMS, _, msg := planShell(d, raw)
	if msg != "" {
		return errorResult(msg)
	}
	title := commandTitle(command)
	var planted func(bool) []string
	if ts.plants != nil {
		planted = ts.plants.Begin(ts.at.root.Path())
	}
	timeout := time.Duration(timeoutMS) * time.Millisecond
	hook := newCommandHook(ts) // command_changes.go
	ended := beginCommand(ts, hook)
	run := sandbox.Run(ctx, sandbox.Command{Root: ts.at.root.Path(), Dir: ts.at.workdir(), Line: command, Net: ts.net, Access: ts.access, Timeout: timeout, Show: ts.live, Changes: hook.changes()})
	ended()
	var notes []string
	if planted != nil {
		notes = planted(run.Untouched) // sandbox/planted_repo.go: before anything else sees the tree
	}
	if run.Err != nil {
		return Result{IsError: true, Title: title, Output: fmt.Sprintf("cannot run the command: %v", run.Err)}
	}
	text, failed := run.Report(timeout)
	var out strings.Builder
	out.WriteString(text)
	for _, n := range notes {
		out.WriteString("\n" + n)
	}
	if failed && ts.net.Off && run.Confined {
		if enforced, _ := sandbox.NetworkEnforced(); enforced {
			out.WriteString("\n" + sandbox.NetworkNote(ts.net))
		}
	}
	return Result{Output: out.String(), IsError: failed, Title: title}
}
