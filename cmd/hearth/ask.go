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
	fs := newFlags("ask", stderr)
	cwd := fs.String("cwd", "", "the session's working directory (default: the current directory); its workspace is the git repository that holds it")
	yes := fs.Bool("yes", false, "allow every edit and command the agent asks for")
	mode := fs.String("mode", "", "the session's mode before the prompt: read-only, ask, auto-edit (edits run) or full-auto (edits and commands run)")
	noDaemon := fs.Bool("no-daemon", false, "run the agent in this process instead of the daemon (nothing stays warm for the next ask)")
	cont := fs.Bool("continue", false, "prompt the most recent session opened in the working directory instead of a new one")
	sessionID := fs.String("session", "", "prompt this earlier session (its id, or a unique prefix) instead of a new one")
	if err := fs.Parse(args); err != nil {
		return &exitError{2, err}
	}
	if *mode != "" && !slices.Contains(askModes, *mode) {
		return &exitError{2, fmt.Errorf("--mode %q: want one of %s", *mode, strings.Join(askModes, ", "))}
	}
	if *cont && *sessionID != "" {
		return &exitError{2, errors.New("--continue and --session both choose the session: give one")}
	}
	prompt, err := askPrompt(fs.Args(), os.Stdin)
	if err != nil {
		return &exitError{2, err}
	}
	dir := *cwd
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return err
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	if err := daemon.CheckCwd(dir); err != nil {
		return &exitError{2, err} // before any daemon is started for it
	}
	cfg, err := loadConfig()
	if err == nil {
		err = cfg.Check()
	}
	if err != nil {
		return err
	}

	var rw io.ReadWriteCloser
	if *noDaemon {
		configureSandbox(cfg) // the in-process daemon's shell commands are confined as serve's are
		c, stop, err := daemonInProcess(cfg, "hearth ask --no-daemon")
		if err != nil {
			return err
		}
		defer stop()
		rw = c
	} else {
		c, err := dialOrStart(ctx, cfg, stderr)
		if err != nil {
			if ctx.Err() != nil {
				return &exitError{exitAskCancelled, errors.New("cancelled")}
			}
			if noDaemonHelps(err) {
				return fmt.Errorf("%w (or run with --no-daemon)", err)
			}
			return err
		}
		rw = c
	}

	con := &console{out: stdout, err: stderr}
	perm := &permitter{con: con, yes: *yes, stop: ctx}
	if !*yes {
		tty, err := openTerminal()
		if err != nil {
			fmt.Fprintf(stderr, "hearth: cannot ask on the terminal (%v): edits and commands will be refused\n", err)
		}
		if tty != nil {
			defer tty.Close()
			perm.tty, perm.in = tty, bufio.NewReader(tty)
		}
	}
	client := rpc.NewClient(rw, rpc.ClientOptions{OnNotify: con.notify, OnCall: perm.onCall})
	defer client.Close()

	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cancelled := func(err error) error {
		if ctx.Err() != nil {
			return &exitError{exitAskCancelled, errors.New("cancelled")}
		}
		return err
	}
	var init acp.InitializeResponse
	if err := client.Call(cctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber,
		ClientInfo: &acp.Implementation{Name: "hearth-ask", Version: version}}, &init); err != nil {
		return cancelled(fmt.Errorf("initialize: %w", err))
	}
	var st rpc.Status
	if err := client.Call(cctx, rpc.MethodHearthStatus, nil, &st); err == nil {
		for _, line := range configNotes(shellConfig(cfg), st, *noDaemon) {
			fmt.Fprintln(stderr, "hearth:", visibleText(line))
		}
	}
	id, err := askSession(cctx, client, dir, *cont, *sessionID)
	if err != nil {
		return cancelled(err)
	}
	if *mode != "" {
		if err := client.Call(cctx, rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id,
			ModeId: acp.SessionModeId(*mode)}, nil); err != nil {
			return cancelled(fmt.Errorf("set mode %s: %w", *mode, err))
		}
	}

	// Ctrl-C cancels the turn; the answer still arrives (as cancelled).
	stopWatch := context.AfterFunc(ctx, func() {
		nctx, ncancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer ncancel()
		client.Notify(nctx, rpc.MethodSessionCancel, acp.CancelNotification{SessionId: id})
	})
	defer stopWatch()
	var res acp.PromptResponse
	err = client.Call(context.Background(), rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: id,
		Prompt: []acp.ContentBlock{acp.TextBlock(prompt)}}, &res)
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

// askPrompt is the prompt: the arguments, or stdin when they are "-" or
// when there are none and stdin is not a terminal (hearth ask < task.md).
func askPrompt(args []string, stdin *os.File) (string, error) {
	fromStdin := len(args) == 1 && args[0] == "-" || len(args) == 0 && !isTerminal(stdin)
	if !fromStdin {
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
