package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

const (
	defaultShellTimeoutMS = 120_000 // when the model gives no timeout_ms
	maxShellTimeoutMS     = 600_000
	shellHeadBytes        = 16 << 10 // output kept from the start...
	shellTailBytes        = 16 << 10 // ...and from the end; the middle is counted, not kept
)

var shellDef = toolDef{
	Tool: Tool{
		Name:        "shell",
		Description: "Run a command with /bin/sh -c in the working directory. Returns stdout and stderr combined, and the exit code. Stdin is empty; processes left in the background are killed when the command exits.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"command":{"type":"string","description":"The shell command line."},` +
			`"timeout_ms":{"type":"integer","minimum":1,"maximum":600000,"description":"Kill the command after this many milliseconds. Default 120000."}` +
			`},"required":["command"],"additionalProperties":false}`),
		Kind:     "execute",
		ReadOnly: false,
	},
	fields:  []string{"command", "timeout_ms"},
	example: `{"command":"go test ./...","timeout_ms":300000}`,
	run:     (*Toolset).shell,
	preview: (*Toolset).previewShell,
}

type shellArgs struct {
	Command   *string `json:"command"`
	TimeoutMS *int    `json:"timeout_ms"`
}

// commandRun is the outcome of one shell command, from runCommand.
type commandRun struct {
	output    string // stdout and stderr combined, capped head and tail
	exitCode  int    // when the command exited by itself
	signal    string // the signal that killed it, when one did ("killed")
	timedOut  bool   // killed because the timeout passed
	cancelled bool   // killed because ctx was cancelled
	escaped   bool   // a process outside the group kept the output open; reading stopped
	err       error  // the command could not be started
}

// planShell checks a shell call. A non-empty msg is the error for the model.
func planShell(d *toolDef, raw json.RawMessage) (command string, timeoutMS int, msg string) {
	var a shellArgs
	if msg := decodeArgs(d, raw, &a); msg != "" {
		return "", 0, msg
	}
	if a.Command == nil {
		return "", 0, missingArg(d, "command").Output
	}
	if strings.TrimSpace(*a.Command) == "" {
		return "", 0, `command is empty; give a shell command line, e.g. {"command":"ls -la"}`
	}
	timeoutMS = defaultShellTimeoutMS
	if a.TimeoutMS != nil {
		if *a.TimeoutMS < 1 || *a.TimeoutMS > maxShellTimeoutMS {
			return "", 0, fmt.Sprintf("timeout_ms must be between 1 and %d (10 minutes), not %d", maxShellTimeoutMS, *a.TimeoutMS)
		}
		timeoutMS = *a.TimeoutMS
	}
	if shellUnsupported != "" {
		return "", 0, shellUnsupported
	}
	return *a.Command, timeoutMS, ""
}

func (ts *Toolset) previewShell(ctx context.Context, d *toolDef, raw json.RawMessage) (Preview, string) {
	if p, msg, ok := ts.previewShellPatch(ctx, raw); ok {
		return p, msg
	}
	command, _, msg := planShell(d, raw)
	if msg != "" {
		return Preview{}, msg
	}
	return Preview{Title: commandTitle(command), Command: command}, ""
}

// shellArgv is how one command starts: through the sandbox helper when the
// process configured one (SetSandbox) and the OS has it, else /bin/sh -c
// (with the network whatever net says: NetworkEnforced reports it).
func shellArgv(root, command string, net Network) (argv []string, helper bool) {
	if sb := currentSandbox(); sandboxSupported && len(sb.Helper) > 0 {
		return sb.helperArgs(root, command, net), true
	}
	return []string{"/bin/sh", "-c", command}, false
}

func (ts *Toolset) shell(ctx context.Context, d *toolDef, raw json.RawMessage) Result {
	if res, ok := ts.shellAsPatch(ctx, raw); ok {
		return res // patch_shell.go: applied as apply_patch, nothing run
	}
	command, timeoutMS, msg := planShell(d, raw)
	if msg != "" {
		return errorResult(msg)
	}
	title := commandTitle(command)
	argv, helper := shellArgv(ts.root.Path(), command, ts.net)
	var live io.Writer
	if ts.live != nil {
		l := startLive(ts.live)
		defer l.stop() // before the result: the call's last update is its end
		live = l
	}
	var planted func() []string
	if ts.plants != nil {
		planted = ts.plants.begin(ts.root.Path())
	}
	timeout := time.Duration(timeoutMS) * time.Millisecond
	run, inCell := runInCell(ctx, currentSandbox(), ts.root.Path(), ts.workdir(), command, ts.net, currentToolEnv(), timeout, live)
	if !inCell {
		run = runCommand(ctx, ts.workdir(), argv, helper, currentToolEnv(), timeout, live)
	}
	helper = helper || inCell
	var notes []string
	if planted != nil {
		notes = planted() // planted_repo.go: before anything else sees the tree
	}
	if run.err != nil {
		return Result{IsError: true, Title: title, Output: fmt.Sprintf("cannot run the command: %v", run.err)}
	}
	var out strings.Builder
	out.WriteString(run.output)
	if run.output == "" {
		out.WriteString("(no output)")
	}
	if !strings.HasSuffix(run.output, "\n") {
		out.WriteByte('\n')
	}
	if run.escaped {
		out.WriteString("[a process that left the command's process group kept the output open; stopped reading]\n")
	}
	switch {
	case run.timedOut:
		fmt.Fprintf(&out, "[killed after timeout of %d ms]", timeoutMS)
	case run.cancelled:
		out.WriteString("[cancelled]")
	case run.signal != "":
		fmt.Fprintf(&out, "[killed by signal: %s]", run.signal)
	default:
		fmt.Fprintf(&out, "[exit code %d]", run.exitCode)
	}
	for _, n := range notes {
		out.WriteString("\n" + n)
	}
	failed := run.timedOut || run.cancelled || run.signal != "" || run.exitCode != 0
	if failed && ts.net.Off && helper {
		if enforced, _ := NetworkEnforced(); enforced {
			out.WriteString("\n" + networkNote(ts.net))
		}
	}
	return Result{Output: out.String(), IsError: failed, Title: title}
}
