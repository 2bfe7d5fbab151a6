package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/daemon"
	"github.com/hearthd/hearth/rpc"
)

// Exit codes of `hearth ask` beyond 0 (the answer is complete), 1 (the
// turn failed: an error, or the model stopped short: a refusal, the token
// limit) and 2 (bad usage).
const (
	exitAskRefused   = 3   // the answer came, but a permission was refused: no terminal to ask on
	exitAskCancelled = 130 // Ctrl-C, or the turn was cancelled
)

// askExitCodes is the end of `hearth ask --help`.
const askExitCodes = `
The prompt is the arguments; with none (or "-") it is read from stdin.
Otherwise a line typed (or piped to stdin) while the answer streams steers
it: the model reads it in the answer it is writing.
Flags may follow the prompt; after -- every word is the prompt's, even one
that begins with - (hearth ask -- -v: what does it do?). --continue and
--session prompt an earlier session, resumed: its history is the model's,
not printed again.
Edits and commands ask first: y/N on the terminal; without a terminal they
are refused unless --yes or --mode allows them.

Exit codes:
  0    the answer is complete
  1    the turn failed (an error, or the model stopped short: refusal, token limit)
  2    bad usage: a flag, a --cwd that is no project directory, a --continue
       or --session that names no session
  3    the answer came, but an edit or command was refused: no terminal to ask on
  130  cancelled (Ctrl-C)
`

// maxStdinPrompt bounds a prompt read from stdin.
const maxStdinPrompt = 1 << 20

// askModes are the --mode values: the daemon's session modes.
var askModes = []string{daemon.ModeReadOnly, daemon.ModeAsk, daemon.ModeAutoEdit, daemon.ModeFullAuto}

// runAsk sends one prompt and streams the answer: through the running
// daemon, starting one as `hearth acp` does when none answers (so the next
// ask in the workspace is warm), or with --no-daemon in a daemon run in
// this process.
func runAsk(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseAskFlags(args, stderr)
	if err != nil {
		return &exitError{2, err}
	}
	prompt, err := askPrompt(o.words, os.Stdin)
	if err != nil {
		return &exitError{2, err}
	}
	dir, err := askDir(o.cwd)
	if err != nil {
		return err
	}
	cfg, err := loadConfig()
	if err == nil {
		err = cfg.Check()
	}
	if err != nil {
		return err
	}
	rw, stop, err := askConn(ctx, cfg, o.noDaemon, stderr)
	if err != nil {
		return err
	}
	defer stop()
	con := &console{out: stdout, err: stderr}
	perm, closeTTY := newPermitter(ctx, con, dir, o.yes, stderr)
	defer closeTTY()
	client := rpc.NewClient(rw, rpc.ClientOptions{OnNotify: con.notify, OnCall: perm.onCall})
	defer client.Close()
	cancelled := func(err error) error {
		if ctx.Err() != nil {
			return &exitError{exitAskCancelled, errors.New("cancelled")}
		}
		return err
	}
	id, err := askStart(ctx, client, cfg, dir, o, stderr)
	if err != nil {
		return cancelled(err)
	}
	stopSteering := startSteering(ctx, &steerer{client: client, id: id, con: con, perm: perm}, promptOnStdin(o.words, os.Stdin))
	res, err := askTurn(ctx, client, id, prompt)
	stopSteering()
	closeAskSession(ctx, client, id)
	con.endLine()
	if err != nil {
		return cancelled(err)
	}
	fmt.Fprintf(stderr, "hearth: session %s\n", id)
	switch {
	case res.StopReason == acp.StopReasonCancelled || ctx.Err() != nil:
		return &exitError{exitAskCancelled, errors.New("cancelled")}
	case res.StopReason != acp.StopReasonEndTurn:
		return fmt.Errorf("the turn ended early: %s", res.StopReason)
	case perm.refused.Load() > 0:
		return &exitError{exitAskRefused, fmt.Errorf("%d edit(s) or command(s) refused: no terminal to ask on; pass --yes or --mode", perm.refused.Load())}
	}
	return nil
}

// closeAskSession tells the daemon ask is done with its session: it stays
// stored (--continue and --session reopen it) but is no longer held open,
// so one-shot asks do not pile up idle sessions. The workspace, its warm
// connection and its spare stay. Best effort, briefly, even after Ctrl-C.
func closeAskSession(ctx context.Context, client *rpc.Client, id acp.SessionId) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	client.Call(cctx, rpc.MethodSessionClose, acp.CloseSessionRequest{SessionId: id}, nil)
}

// askOpts are ask's flags, and the words left for the prompt.
type askOpts struct {
	cwd, mode, sessionID string
	yes, noDaemon, cont  bool
	words                []string
}

func parseAskFlags(args []string, stderr io.Writer) (askOpts, error) {
	var o askOpts
	fs := newFlags("ask", stderr)
	fs.StringVar(&o.cwd, "cwd", "", "the session's working directory (default: the current directory); its workspace is the git repository that holds it")
	fs.BoolVar(&o.yes, "yes", false, "allow every edit and command the agent asks for")
	fs.BoolVar(&o.yes, "y", false, "short for --yes")
	fs.StringVar(&o.mode, "mode", "", "the session's mode before the prompt: read-only, ask, auto-edit (edits run) or full-auto (edits and commands run)")
	fs.BoolVar(&o.noDaemon, "no-daemon", false, "run the agent in this process instead of the daemon (nothing stays warm for the next ask)")
	fs.BoolVar(&o.cont, "continue", false, "prompt the most recent session opened in the working directory instead of a new one")
	fs.StringVar(&o.sessionID, "session", "", "prompt this earlier session (its id, or a unique prefix) instead of a new one")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.mode != "" && !slices.Contains(askModes, o.mode) {
		return o, fmt.Errorf("--mode %q: want one of %s", o.mode, strings.Join(askModes, ", "))
	}
	if o.cont && o.sessionID != "" {
		return o, errors.New("--continue and --session both choose the session: give one")
	}
	o.words = fs.Args()
	return o, nil
}

// askDir is the session's directory: --cwd, else the current one, made
// absolute and checked before any daemon is started for it.
func askDir(cwd string) (string, error) {
	dir := cwd
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return "", err
		}
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if err := daemon.CheckCwd(dir); err != nil {
		return "", &exitError{2, err}
	}
	return dir, nil
}

// askConn connects to the daemon (started when none answers), or with
// noDaemon to one run in this process; stop ends what it started here.
func askConn(ctx context.Context, cfg daemon.Config, noDaemon bool, stderr io.Writer) (rw io.ReadWriteCloser, stop func(), err error) {
	if noDaemon {
		configureSandbox(cfg) // the in-process daemon's shell commands are confined as serve's are
		return daemonInProcess(cfg, "hearth ask --no-daemon")
	}
	c, err := dialOrStart(ctx, cfg, stderr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, &exitError{exitAskCancelled, errors.New("cancelled")}
		}
		if noDaemonHelps(err) {
			return nil, nil, fmt.Errorf("%w (or run with --no-daemon)", err)
		}
		return nil, nil, err
	}
	return c, func() {}, nil
}

// newPermitter answers the daemon's permission requests: --yes allows,
// else the terminal asks, else they are refused. closeTTY closes the
// terminal it opened.
func newPermitter(ctx context.Context, con *console, dir string, yes bool, stderr io.Writer) (perm *permitter, closeTTY func()) {
	perm, closeTTY = &permitter{con: con, dir: dir, yes: yes, stop: ctx}, func() {}
	if yes {
		return perm, closeTTY
	}
	tty, err := openTerminal()
	if err != nil {
		fmt.Fprintf(stderr, "hearth: cannot ask on the terminal (%v): edits and commands will be refused\n", err)
	}
	if tty != nil {
		perm.tty, perm.in = tty, bufio.NewReader(tty)
		closeTTY = func() { tty.Close() }
	}
	return perm, closeTTY
}

// askStart initializes, says where the daemon's settings differ from the
// shell's, opens (or resumes) the session and sets its mode.
func askStart(ctx context.Context, client *rpc.Client, cfg daemon.Config, dir string, o askOpts, stderr io.Writer) (acp.SessionId, error) {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var init acp.InitializeResponse
	if err := client.Call(cctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber,
		ClientInfo: &acp.Implementation{Name: "hearth-ask", Version: version}}, &init); err != nil {
		return "", fmt.Errorf("initialize: %w", err)
	}
	var st rpc.Status
	if err := client.Call(cctx, rpc.MethodHearthStatus, nil, &st); err == nil {
		for _, line := range configNotes(shellConfig(cfg), st, o.noDaemon) {
			fmt.Fprintln(stderr, "hearth:", visibleText(line))
		}
	}
	id, err := askSession(cctx, client, dir, o.cont, o.sessionID)
	if err != nil {
		return "", err
	}
	if o.mode != "" {
		if err := client.Call(cctx, rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id,
			ModeId: acp.SessionModeId(o.mode)}, nil); err != nil {
			return "", fmt.Errorf("set mode %s: %w", o.mode, err)
		}
	}
	return id, nil
}

// askTurn sends the prompt and waits for its answer; Ctrl-C (ctx) cancels
// the turn, whose answer still arrives (as cancelled).
func askTurn(ctx context.Context, client *rpc.Client, id acp.SessionId, prompt string) (acp.PromptResponse, error) {
	stopWatch := context.AfterFunc(ctx, func() {
		nctx, ncancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer ncancel()
		client.Notify(nctx, rpc.MethodSessionCancel, acp.CancelNotification{SessionId: id})
	})
	defer stopWatch()
	var res acp.PromptResponse
	err := client.Call(context.Background(), rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: id,
		Prompt: []acp.ContentBlock{acp.TextBlock(prompt)}}, &res)
	return res, err
}

// promptOnStdin says whether the prompt is read from stdin: the arguments
// are "-", or there are none and stdin is not a terminal (hearth ask <
// task.md). Otherwise lines on stdin steer the answer.
func promptOnStdin(args []string, stdin *os.File) bool {
	return len(args) == 1 && args[0] == "-" || len(args) == 0 && !isTerminal(stdin)
}

// askPrompt is the prompt: the arguments, or stdin (promptOnStdin).
func askPrompt(args []string, stdin *os.File) (string, error) {
	if !promptOnStdin(args, stdin) {
		prompt := strings.TrimSpace(strings.Join(args, " "))
		if prompt == "" {
			return "", errors.New("usage: hearth ask [flags] PROMPT (or the prompt on stdin: hearth ask < task.md)")
		}
		return prompt, nil
	}
	b, err := io.ReadAll(io.LimitReader(stdin, maxStdinPrompt+1))
	if err != nil {
		return "", fmt.Errorf("read the prompt from stdin: %w", err)
	}
	if len(b) > maxStdinPrompt {
		return "", fmt.Errorf("the prompt on stdin is over %d MiB", maxStdinPrompt>>20)
	}
	prompt := strings.TrimSpace(string(b))
	if prompt == "" {
		return "", errors.New("the prompt on stdin is empty")
	}
	return prompt, nil
}
