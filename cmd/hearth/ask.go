package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/daemon"
	"github.com/hearthd/hearth/rpc"
)

// runAsk sends one prompt and streams the answer: to the running daemon
// when there is one, else to a daemon run in this process (no socket).
func runAsk(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("ask", stderr)
	cwd := fs.String("cwd", "", "workspace directory (default: the current directory)")
	if err := fs.Parse(args); err != nil {
		return &exitError{2, err}
	}
	prompt := strings.TrimSpace(strings.Join(fs.Args(), " "))
	if prompt == "" {
		return &exitError{2, fmt.Errorf("usage: hearth ask [--cwd DIR] PROMPT")}
	}
	dir := *cwd
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}

	var rw io.ReadWriteCloser
	if c, err := daemon.DialSocket(context.Background(), cfg.Socket); err == nil {
		rw = c
	} else if errors.Is(err, daemon.ErrUnsafeSocket) {
		return err
	} else {
		configureSandbox(cfg) // the in-process daemon's shell commands are confined as serve's are
		d, err := daemon.New(cfg, slog.New(slog.DiscardHandler))
		if err != nil {
			return err
		}
		defer d.Close()
		a, b := net.Pipe()
		go d.ServeConn(b) // ends when a closes, or at d.Close, which waits for it
		rw = a
	}

	p := &printer{out: stdout, err: stderr}
	client := rpc.NewClient(rw, rpc.ClientOptions{OnNotify: p.notify})
	defer client.Close()

	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var init acp.InitializeResponse
	if err := client.Call(cctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber,
		ClientInfo: &acp.Implementation{Name: "hearth-ask", Version: version}}, &init); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	var st rpc.Status
	if err := client.Call(cctx, rpc.MethodHearthStatus, nil, &st); err == nil && st.Simulator {
		fmt.Fprintln(stderr, "hearth: OPENAI_API_KEY is not set: answering with the built-in simulator")
	}
	var sess acp.NewSessionResponse
	if err := client.Call(cctx, rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: dir, McpServers: []acp.McpServer{}}, &sess); err != nil {
		return fmt.Errorf("new session: %w", err)
	}

	// Ctrl-C cancels the turn; the answer still arrives (as cancelled).
	stopWatch := context.AfterFunc(ctx, func() {
		nctx, ncancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer ncancel()
		client.Notify(nctx, rpc.MethodSessionCancel, acp.CancelNotification{SessionId: sess.SessionId})
	})
	defer stopWatch()
	var res acp.PromptResponse
	err = client.Call(context.Background(), rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: sess.SessionId,
		Prompt: []acp.ContentBlock{acp.TextBlock(prompt)}}, &res)
	p.endLine()
	if err != nil {
		return err
	}
	if res.StopReason != acp.StopReasonEndTurn {
		fmt.Fprintf(stderr, "hearth: turn ended: %s\n", res.StopReason)
	}
	fmt.Fprintf(stderr, "hearth: session %s\n", sess.SessionId)
	return nil
}

// printer writes a turn's updates to the terminal: the answer on stdout,
// tool activity on stderr.
type printer struct {
	out, err io.Writer
	midLine  bool
}

func (p *printer) notify(method string, params json.RawMessage) {
	if method != rpc.MethodSessionUpdate {
		return
	}
	var n acp.SessionNotification
	if json.Unmarshal(params, &n) != nil {
		return
	}
	u := n.Update
	switch {
	case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
		t := u.AgentMessageChunk.Content.Text.Text
		fmt.Fprint(p.out, t)
		p.midLine = !strings.HasSuffix(t, "\n")
	case u.ToolCall != nil:
		p.endLine()
		fmt.Fprintf(p.err, "→ %s\n", u.ToolCall.Title)
	case u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil:
		switch *u.ToolCallUpdate.Status {
		case acp.ToolCallStatusCompleted, acp.ToolCallStatusFailed:
			title := string(u.ToolCallUpdate.ToolCallId)
			if u.ToolCallUpdate.Title != nil {
				title = *u.ToolCallUpdate.Title
			}
			fmt.Fprintf(p.err, "  %s: %s\n", *u.ToolCallUpdate.Status, title)
		}
	}
}

func (p *printer) endLine() {
	if p.midLine {
		fmt.Fprintln(p.out)
		p.midLine = false
	}
}
