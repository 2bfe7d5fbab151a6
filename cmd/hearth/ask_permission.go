package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aymanbagabas/go-udiff"
	"github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/rpc"
)

// permitter answers the daemon's session/request_permission calls for one
// `hearth ask`: everything with --yes, by a y/N question on the terminal
// when there is one, else a refusal that says how to allow. It lives as
// long as the ask's rpc.Client; its calls run one at a time (one turn asks
// one question at a time).
type permitter struct {
	con *console
	dir string // the session's directory: diffs name files relative to it
	yes bool
	// tty is the terminal the answers are read from (nil without one), and
	// in its buffered reader. stop is the ask's context: Ctrl-C ends a
	// question at once.
	tty  *os.File
	in   *bufio.Reader
	stop context.Context
	// refused counts the permissions refused for want of a terminal: ask
	// exits 3 when it is not zero.
	refused atomic.Int32
	// While ask's steerer reads the terminal (routed), a question gets its
	// answer from it: answer is the open question's channel, nil when none
	// is open.
	mu     sync.Mutex
	routed bool
	answer chan string
}

// openTerminal opens the controlling terminal for answers when stdin is
// one. /dev/tty is a description of its own, so the read can have a
// deadline (a Ctrl-C ends it) without making the shell's stdin non-blocking.
func openTerminal() (*os.File, error) {
	if !isTerminal(os.Stdin) {
		return nil, nil
	}
	return os.OpenFile("/dev/tty", os.O_RDWR, 0)
}

func (p *permitter) onCall(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method != rpc.MethodSessionRequestPermission {
		return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "method not found: %q (hearth ask answers only %s)", method, rpc.MethodSessionRequestPermission)
	}
	var req acp.RequestPermissionRequest
	if err := json.Unmarshal(params, &req); err != nil {
		return nil, rpc.InvalidParams("params", "%v", err)
	}
	title := "a tool call"
	if req.ToolCall.Title != nil && *req.ToolCall.Title != "" {
		title = *req.ToolCall.Title
	}
	detail, warning := describeCall(req.ToolCall, title, p.dir)
	title = visibleLine(title)
	switch {
	case p.yes:
		p.con.aside(func() { fmt.Fprintf(p.con.err, "hearth: allowed (--yes): %s\n%s", title, warning) })
		return choose(req, acp.PermissionOptionKindAllowOnce), nil
	case p.tty == nil:
		p.refused.Add(1)
		p.con.aside(func() {
			fmt.Fprintf(p.con.err, "hearth: refused: %s\n%s%s", title, detail, warning)
			fmt.Fprintln(p.con.err, "hearth: no terminal to ask on: pass --yes to allow what the agent asks, or --mode auto-edit (edits) or --mode full-auto (edits and commands)")
		})
		return choose(req, acp.PermissionOptionKindRejectOnce), nil
	}
	routed := p.expectAnswer() // before the question shows: a quick answer is its
	p.con.aside(func() {
		fmt.Fprintf(p.con.err, "hearth: the agent asks to run: %s\n%s%s", title, detail, warning)
		fmt.Fprint(p.con.err, "Allow? [y]es, [a]lways in this session, [N]o: ")
	})
	answer, err := p.readLine(ctx, routed)
	if err != nil {
		p.con.aside(func() { fmt.Fprintln(p.con.err) })
		return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeCancelled()}, nil
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return choose(req, acp.PermissionOptionKindAllowOnce), nil
	case "a", "always":
		return choose(req, acp.PermissionOptionKindAllowAlways), nil
	}
	return choose(req, acp.PermissionOptionKindRejectOnce), nil
}

// route makes the steerer the terminal's reader: questions get their
// answers from it (takeAnswer).
func (p *permitter) route() {
	p.mu.Lock()
	p.routed = true
	p.mu.Unlock()
}

// expectAnswer opens a question's answer channel when the steerer reads
// the terminal; nil when the question reads it itself.
func (p *permitter) expectAnswer() chan string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.routed {
		return nil
	}
	p.answer = make(chan string, 1)
	return p.answer
}

// takeAnswer gives line to the open question, if any; false when none is
// open (the line is the steerer's).
func (p *permitter) takeAnswer(line string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.answer == nil {
		return false
	}
	p.answer <- line
	p.answer = nil
	return true
}

// readLine reads one answer: from routed (the steerer's lines) when not
// nil, else from the terminal, until ctx or the ask ends; the reading
// goroutine ends before it returns (a past read deadline unblocks it).
func (p *permitter) readLine(ctx context.Context, routed chan string) (string, error) {
	if routed != nil {
		select {
		case l := <-routed:
			return l, nil
		case <-ctx.Done():
		case <-p.stop.Done():
		}
		p.mu.Lock()
		if p.answer == routed {
			p.answer = nil
		}
		p.mu.Unlock()
		return "", context.Canceled
	}
	type line struct {
		s   string
		err error
	}
	got := make(chan line, 1)
	go func() {
		s, err := p.in.ReadString('\n')
		if errors.Is(err, io.EOF) && s != "" {
			err = nil // a last answer without a newline
		}
		got <- line{s, err}
	}()
	select {
	case l := <-got:
		return l.s, l.err
	case <-ctx.Done():
	case <-p.stop.Done():
	}
	if err := p.tty.SetReadDeadline(time.Now()); err != nil {
		// Not pollable: the read cannot be interrupted. The process is
		// about to exit, which ends it.
		return "", fmt.Errorf("the question was interrupted: %w", err)
	}
	<-got
	p.tty.SetReadDeadline(time.Time{})
	return "", context.Canceled
}

// choose answers with the option of that kind, or cancelled when the
// daemon offered none.
func choose(req acp.RequestPermissionRequest, kind acp.PermissionOptionKind) acp.RequestPermissionResponse {
	for _, o := range req.Options {
		if o.Kind == kind {
			return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected(o.OptionId)}
		}
	}
	return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeCancelled()}
}

// diffLabels are a diff's header names for path, as git gives them: a/ and
// b/ before its path from the session's directory when it is inside, else
// the path in full. Made visible: a name cannot move the terminal.
func diffLabels(dir, path string) (from, to string) {
	if rel, err := filepath.Rel(dir, path); err == nil && filepath.IsLocal(rel) {
		name := visibleLine(filepath.ToSlash(rel))
		return "a/" + name, "b/" + name
	}
	return visibleLine(path), visibleLine(path)
}

// maxDetailLines bounds a diff shown in a question; the rest is counted.
const maxDetailLines = 80

// describeCall is what the question shows of a pending call: the diff an
// edit would make (each line made visible), or the command, indented, on
// one line exactly as it runs with its controls escaped; "" when there is
// neither. warning is the line that says so when the command or the title
// held characters shown escaped, else "". Files are named relative to dir.
func describeCall(tc acp.ToolCallUpdate, title, dir string) (detail, warning string) {
	var b strings.Builder
	hidden := ""
	for _, c := range tc.Content {
		switch {
		case c.Diff != nil:
			from, to := diffLabels(dir, c.Diff.Path)
			old := ""
			if c.Diff.OldText != nil {
				old = *c.Diff.OldText
			} else {
				from = "/dev/null" // no old text: the file is new
			}
			d := udiff.Unified(from, to, old, c.Diff.NewText)
			if d == "" {
				d = "(no change to " + visibleLine(c.Diff.Path) + ")\n"
			}
			b.WriteString(d)
		case c.Content != nil && c.Content.Content.Text != nil:
			text := c.Content.Content.Text.Text
			if hasControls(text) {
				hidden = "the command"
			}
			b.WriteString(visibleLine(text))
			b.WriteString("\n")
		}
	}
	if hidden == "" && hasControls(title) {
		hidden = "the call's title"
	}
	if hidden != "" {
		warning = "hearth: warning: " + hidden + " contains control characters, shown escaped (\\x1b is ESC, \\r a carriage return, \\n a newline)\n"
	}
	lines := strings.SplitAfter(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return "", warning
	}
	var out strings.Builder
	for i, l := range lines {
		if i == maxDetailLines {
			fmt.Fprintf(&out, "    … %d more lines\n", len(lines)-i)
			break
		}
		out.WriteString("    " + visibleText(strings.TrimSuffix(l, "\n")) + "\n")
	}
	return out.String(), warning
}
