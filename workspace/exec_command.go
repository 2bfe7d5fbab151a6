package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/hearthd/hearth/workspace/sandbox"
)

// The tools of the families trained on a shell that stays open:
// exec_command starts a command and waits a while for its output;
// write_stdin writes to one still running and waits again. Their names,
// parameters and result layout are the ones those models know.
const (
	ExecCommandTool = "exec_command"
	WriteStdinTool  = "write_stdin"
)

// How long a call waits for output before it returns, in milliseconds:
// exec_command's and write_stdin's default and bounds; a write_stdin that
// writes nothing (a poll) waits at least pollMinYieldMS.
const (
	execDefaultYieldMS  = 10_000
	writeDefaultYieldMS = 250
	minYieldMS          = 250
	maxYieldMS          = 30_000
	pollMinYieldMS      = 5_000
	pollMaxYieldMS      = 300_000
	defaultOutputTokens = 10_000
)

var execCommandDef = toolDef{
	Tool: Tool{
		Name: ExecCommandTool,
		Description: "Start a command in the working directory and return what it printed within yield_time_ms. " +
			"A command still running then keeps running: the result gives its session ID, for write_stdin to send it input or read more of its output. " +
			"Use tty for programs that need a terminal (a REPL, a pager, a prompt).",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"cmd":{"type":"string","description":"The shell command line to run."},` +
			`"workdir":{"type":"string","description":"The directory to run it in, relative to the working directory; it defaults to the working directory."},` +
			`"shell":{"type":"string","description":"The shell that runs cmd; /bin/sh by default."},` +
			`"login":{"type":"boolean","description":"Run the shell as a login shell (-l). Default false."},` +
			`"tty":{"type":"boolean","description":"Give the command a terminal (a pty) instead of pipes. Default false."},` +
			`"yield_time_ms":{"type":"number","description":"How long to wait for output before returning, in milliseconds (250 to 30000; default 10000). The call returns sooner when the command exits."},` +
			`"max_output_tokens":{"type":"number","description":"The most output to return, in tokens (default 10000); the middle of longer output is cut."},` +
			EscalationParams +
			`},"required":["cmd"],"additionalProperties":false}`),
		Kind: "execute",
	},
	fields:  []string{"cmd", "workdir", "shell", "login", "tty", "yield_time_ms", "max_output_tokens", "sandbox_permissions", "justification"},
	example: `{"cmd":"go test ./...","yield_time_ms":10000}`,
	run:     (*Toolset).execCommand,
	preview: previewExec,
}

var writeStdinDef = toolDef{
	Tool: Tool{
		Name: WriteStdinTool,
		Description: "Write characters to the stdin of a command exec_command left running, then return what it printed within yield_time_ms. " +
			"Empty chars only waits for more output.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"session_id":{"type":"number","description":"The session ID exec_command gave for the running command."},` +
			`"chars":{"type":"string","description":"What to write; may be empty. Include \"\\n\" to end a line; with a terminal, \"\\u0003\" is Ctrl-C."},` +
			`"yield_time_ms":{"type":"number","description":"How long to wait for output before returning, in milliseconds (default 250; an empty write waits 5000 to 300000)."},` +
			`"max_output_tokens":{"type":"number","description":"The most output to return, in tokens (default 10000); the middle of longer output is cut."}` +
			`},"required":["session_id"],"additionalProperties":false}`),
		Kind: "execute",
	},
	fields:  []string{"session_id", "chars", "yield_time_ms", "max_output_tokens"},
	example: `{"session_id":1001,"chars":"print(1)\n","yield_time_ms":1000}`,
	run:     writeStdin,
	preview: previewWrite,
}

type execArgs struct {
	Cmd             *string  `json:"cmd"`
	Workdir         *string  `json:"workdir"`
	Shell           *string  `json:"shell"`
	Login           *bool    `json:"login"`
	TTY             *bool    `json:"tty"`
	YieldTimeMS     *float64 `json:"yield_time_ms"`
	MaxOutputTokens *float64 `json:"max_output_tokens"`
	escalation
}

// execPlan is a checked exec_command call.
type execPlan struct {
	cmd, line, dir string
	tty            bool
	yield          time.Duration
	tokens         int
	esc            Escalation // sandbox_permissions and justification
}

// planExec checks an exec_command call. A non-empty msg is the error for
// the model.
func planExec(at place, d *toolDef, raw json.RawMessage) (execPlan, string) {
	var a execArgs
	if msg := decodeArgs(d, raw, &a); msg != "" {
		return execPlan{}, msg
	}
	if a.Cmd == nil {
		return execPlan{}, missingArg(d, "cmd").Output
	}
	if strings.TrimSpace(*a.Cmd) == "" {
		return execPlan{}, `cmd is empty; give a shell command line, e.g. {"cmd":"ls -la"}`
	}
	p := execPlan{cmd: *a.Cmd, dir: at.workdir(), tty: a.TTY != nil && *a.TTY}
	var msg string
	if p.yield, msg = yieldArg(a.YieldTimeMS, execDefaultYieldMS, minYieldMS, maxYieldMS); msg != "" {
		return execPlan{}, msg
	}
	if p.tokens, msg = tokensArg(a.MaxOutputTokens); msg != "" {
		return execPlan{}, msg
	}
	if a.Workdir != nil && *a.Workdir != "" {
		abs, err := at.root.resolveIn(at.dir, *a.Workdir)
		if err != nil {
			return execPlan{}, "workdir: " + err.Error()
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return execPlan{}, fmt.Sprintf("workdir %q is not a directory in the workspace", *a.Workdir)
		}
		p.dir = abs
	}
	if p.esc, msg = a.escalation.check(); msg != "" {
		return execPlan{}, msg
	}
	p.line = shellLine(p.cmd, a.Shell, a.Login != nil && *a.Login)
	if sandbox.Unsupported != "" {
		return execPlan{}, sandbox.Unsupported
	}
	return p, ""
}

// shellLine is the line /bin/sh runs for cmd: cmd itself, or the given
// shell (as a login shell when login) running it in /bin/sh's place.
func shellLine(cmd string, shell *string, login bool) string {
	sh := "/bin/sh"
	if shell != nil && strings.TrimSpace(*shell) != "" {
		sh = strings.TrimSpace(*shell)
	}
	if sh == "/bin/sh" && !login {
		return cmd
	}
	flag := "-c"
	if login {
		flag = "-lc"
	}
	return "exec " + shellQuote(sh) + " " + flag + " " + shellQuote(cmd)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// yieldArg is a yield_time_ms argument within [lo, hi], def when absent.
func yieldArg(v *float64, def, lo, hi int) (time.Duration, string) {
	ms := def
	if v != nil {
		if *v < 0 || math.IsNaN(*v) || math.IsInf(*v, 0) {
			return 0, fmt.Sprintf("yield_time_ms must be a number of milliseconds, not %v", *v)
		}
		ms = int(min(*v, float64(hi)))
	}
	return time.Duration(min(max(ms, lo), hi)) * time.Millisecond, ""
}

// tokensArg is a max_output_tokens argument, defaultOutputTokens when
// absent.
func tokensArg(v *float64) (int, string) {
	if v == nil {
		return defaultOutputTokens, ""
	}
	if *v < 1 || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return 0, fmt.Sprintf("max_output_tokens must be at least 1, not %v", *v)
	}
	return int(min(*v, 1<<20)), ""
}

// asShellArgs is an exec_command call's arguments as a shell call's, for
// the apply_patch invocations models send through their shell
// (patch_shell.go); ok is false for a call with a workdir, or one that
// does not decode.
func asShellArgs(raw json.RawMessage) (json.RawMessage, bool) {
	var a struct {
		Cmd     string `json:"cmd"`
		Workdir string `json:"workdir"`
	}
	if json.Unmarshal(raw, &a) != nil || a.Workdir != "" {
		return nil, false
	}
	b, err := json.Marshal(map[string]string{"command": a.Cmd})
	return b, err == nil
}

func previewExec(ts *Toolset, ctx context.Context, d *toolDef, raw json.RawMessage) (Preview, string) {
	if args, ok := asShellArgs(raw); ok {
		if p, msg, ok := ts.previewShellPatch(ctx, args); ok {
			return p, msg
		}
	}
	p, msg := planExec(ts.at, d, raw)
	if msg != "" {
		return Preview{}, msg
	}
	return Preview{Title: commandTitle(p.cmd), Command: p.cmd, Escalation: p.esc}, ""
}

func (ts *Toolset) execCommand(ctx context.Context, d *toolDef, raw json.RawMessage) Result {
	if args, ok := asShellArgs(raw); ok {
		if res, ok := ts.shellAsPatch(ctx, args); ok {
			return res // applied as apply_patch, nothing run
		}
	}
	plan, msg := planExec(ts.at, d, raw)
	if msg != "" {
		return errorResult(msg)
	}
	title := commandTitle(plan.cmd)
	if ts.procs == nil {
		return Result{IsError: true, Title: title, Output: "exec_command runs only in a session"}
	}
	start := time.Now()
	planted := ts.guardPlants()
	out := newPendingOutput()
	hook := newCommandHook(ts) // command_changes.go
	ended := beginCommand(ts, hook)
	defer ended()
	sp, err := sandbox.Start(sandbox.Command{Root: ts.at.root.Path(), Dir: plan.dir, Line: plan.line, Net: ts.net, Access: ts.access, Timeout: sandbox.NoTimeout, Changes: hook.changes()}, plan.tty, out)
	if err != nil {
		planted()
		return Result{IsError: true, Title: title, Output: fmt.Sprintf("exec_command could not start the command: %v", err)}
	}
	p := &process{command: plan.cmd, tty: plan.tty, started: start, p: sp, out: out, hook: hook}
	evicted, err := ts.procs.add(p)
	if err != nil {
		sp.Kill()
		planted()
		return Result{IsError: true, Title: title, Output: fmt.Sprintf("exec_command did not start the command: %v", err)}
	}
	var notes []string
	if evicted != nil {
		evicted.p.Kill()
		notes = append(notes, fmt.Sprintf("[hearth ended process %d (%s), the least recently used, to keep at most %d running]", evicted.id, commandTitle(evicted.command), MaxProcesses))
	}
	cancelled := collect(ctx, p, plan.yield, ts.live)
	if cancelled {
		sp.Kill() // the model never got its id: nothing may be left behind
		notes = append(notes, "[cancelled]")
	}
	notes = append(notes, planted()...)
	return ts.procs.report(p, start, plan.tokens, title, notes)
}

// guardPlants starts watching for the repositories a command plants
// (sandbox/planted_repo.go) for the length of one call; the function it
// returns, called once when the call ends, disarms them and says so.
func (ts *Toolset) guardPlants() func() []string {
	if ts.plants == nil {
		return func() []string { return nil }
	}
	end := ts.plants.Begin(ts.at.root.Path())
	return func() []string { return end(false) } // a process may live on after its call
}

// report takes what p printed during a call that started at start and
// words it, releasing p (out of the table when its end is reported).
func (ps *Processes) report(p *process, start time.Time, tokens int, title string, notes []string) Result {
	ended := isDone(p)
	r := execReport{wall: time.Since(start), exited: ended, id: p.id, out: p.out.take(), budget: tokens, notes: notes}
	failed := false
	if ended {
		end := p.p.Wait()
		r.code, failed = end.Code(), end.Code() != 0
	}
	ps.release(p, ended)
	return Result{Output: r.String(), IsError: failed, Title: title}
}

// liveEvery is how often a call shows a process's new output, at most.
const liveEvery = 250 * time.Millisecond

// liveBytes bounds what a call shows of a process's output.
const liveBytes = 16 << 10

// liveFirst is how long after a call's first output it is first shown: a
// command that ends sooner shows it in its result alone, and the daemon
// spends no CPU on an update while it runs (a variable for tests).
var liveFirst = 100 * time.Millisecond

// collect waits until p has ended, yield has passed or ctx is cancelled
// (cancelled says so), showing what p prints meanwhile, at most every
// liveEvery, when show is set.
func collect(ctx context.Context, p *process, yield time.Duration, show func(string)) (cancelled bool) {
	deadline := time.NewTimer(yield)
	defer deadline.Stop()
	var next <-chan time.Time  // set until liveFirst after the first output, then while shown less than liveEvery ago
	owed, first := false, true // owed: output came since
	for {
		select {
		case <-p.p.Done():
			return false
		case <-deadline.C:
			return false
		case <-ctx.Done():
			return true
		case <-p.out.wake:
			if show == nil {
				continue
			}
			if next != nil || first {
				if first {
					first, next = false, time.After(liveFirst)
				}
				owed = true
				continue
			}
			show(p.out.peek().text(liveBytes))
			next = time.After(liveEvery)
		case <-next:
			next = nil
			if owed {
				owed = false
				show(p.out.peek().text(liveBytes))
				next = time.After(liveEvery)
			}
		}
	}
}

type writeArgs struct {
	SessionID       *float64 `json:"session_id"`
	Chars           *string  `json:"chars"`
	YieldTimeMS     *float64 `json:"yield_time_ms"`
	MaxOutputTokens *float64 `json:"max_output_tokens"`
}

// writePlan is a checked write_stdin call.
type writePlan struct {
	id     int
	chars  string
	yield  time.Duration
	tokens int
}

func planWrite(d *toolDef, raw json.RawMessage) (writePlan, string) {
	var a writeArgs
	if msg := decodeArgs(d, raw, &a); msg != "" {
		return writePlan{}, msg
	}
	if a.SessionID == nil {
		return writePlan{}, missingArg(d, "session_id").Output
	}
	if *a.SessionID != math.Trunc(*a.SessionID) || *a.SessionID < 0 || *a.SessionID > math.MaxInt32 {
		return writePlan{}, fmt.Sprintf("session_id must be the session ID exec_command returned, not %v", *a.SessionID)
	}
	w := writePlan{id: int(*a.SessionID)}
	if a.Chars != nil {
		w.chars = *a.Chars
	}
	def, lo, hi := writeDefaultYieldMS, minYieldMS, maxYieldMS
	if w.chars == "" {
		def, lo, hi = pollMinYieldMS, pollMinYieldMS, pollMaxYieldMS
	}
	var msg string
	if w.yield, msg = yieldArg(a.YieldTimeMS, def, lo, hi); msg != "" {
		return writePlan{}, msg
	}
	if w.tokens, msg = tokensArg(a.MaxOutputTokens); msg != "" {
		return writePlan{}, msg
	}
	return w, ""
}

func previewWrite(_ *Toolset, _ context.Context, d *toolDef, raw json.RawMessage) (Preview, string) {
	w, msg := planWrite(d, raw)
	if msg != "" {
		return Preview{}, msg
	}
	if w.chars == "" {
		return Preview{Title: fmt.Sprintf("Read process %d", w.id)}, ""
	}
	return Preview{Title: fmt.Sprintf("Write to process %d", w.id)}, ""
}

func writeStdin(ts *Toolset, ctx context.Context, d *toolDef, raw json.RawMessage) Result {
	w, msg := planWrite(d, raw)
	if msg != "" {
		return errorResult(msg)
	}
	pv, _ := previewWrite(ts, ctx, d, raw)
	if ts.procs == nil {
		return Result{IsError: true, Title: pv.Title, Output: "write_stdin runs only in a session"}
	}
	p := ts.procs.use(w.id)
	if p == nil {
		return Result{IsError: true, Title: pv.Title, Output: fmt.Sprintf("no process with session ID %d is running in this session: its end was reported already, or it was never started; start one with exec_command", w.id)}
	}
	start := time.Now()
	planted := ts.guardPlants()
	defer beginCommand(ts, p.hook)() // what the process changed meanwhile is the running turn's
	var notes []string
	if w.chars != "" {
		if n, err := p.p.Write([]byte(w.chars), time.Second); err != nil && !isDone(p) {
			notes = append(notes, fmt.Sprintf("[wrote %d of %d bytes: %v]", n, len(w.chars), err))
		}
	}
	if collect(ctx, p, w.yield, ts.live) {
		notes = append(notes, "[cancelled while waiting; the process keeps running]")
	}
	notes = append(notes, planted()...)
	return ts.procs.report(p, start, w.tokens, pv.Title, notes)
}

// WithProcesses returns a copy of ts whose exec_command and write_stdin
// calls start and find their processes in ps, the session's. The copy
// lives for one call.
func (ts *Toolset) WithProcesses(ps *Processes) *Toolset {
	c := *ts
	c.procs = ps
	return &c
}
