package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
)

// console writes one `hearth ask` to the terminal: the answer on stdout,
// everything else (tool activity, notices, permission questions) on
// stderr, never mixed into the answer. Every string it is given is printed
// through visibleText or visibleLine (visible.go). It lives as long as the ask; its
// methods are called from the client's read goroutine and from permission
// calls, so it serialises them.
type console struct {
	out, err io.Writer
	mu       sync.Mutex
	midLine  bool // stdout's last write did not end a line
}

func (c *console) notify(method string, params json.RawMessage) {
	if method != rpc.MethodSessionUpdate {
		return
	}
	var n acp.SessionNotification
	if json.Unmarshal(params, &n) != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	u := n.Update
	switch {
	case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
		t := u.AgentMessageChunk.Content.Text.Text
		if notice, _ := u.AgentMessageChunk.Meta[rpc.MetaNotice].(bool); notice {
			c.endLineLocked()
			fmt.Fprintln(c.err, visibleText(strings.TrimPrefix(strings.TrimSpace(t), "> ")))
			return
		}
		fmt.Fprint(c.out, visibleText(t))
		c.midLine = !strings.HasSuffix(t, "\n")
	case u.ToolCall != nil:
		c.endLineLocked()
		fmt.Fprintf(c.err, "→ %s\n", visibleLine(u.ToolCall.Title))
	case u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil:
		switch *u.ToolCallUpdate.Status {
		case acp.ToolCallStatusCompleted, acp.ToolCallStatusFailed:
			title := string(u.ToolCallUpdate.ToolCallId)
			if u.ToolCallUpdate.Title != nil {
				title = *u.ToolCallUpdate.Title
			}
			fmt.Fprintf(c.err, "  %s: %s\n", *u.ToolCallUpdate.Status, visibleLine(title))
		}
	case u.Plan != nil:
		c.endLineLocked()
		fmt.Fprintln(c.err, "plan:")
		for _, e := range u.Plan.Entries {
			fmt.Fprintf(c.err, "  %s %s\n", planMark(e.Status), visibleLine(e.Content))
		}
	}
}

// planMark is how a step of the agent's plan is shown: [x] completed, [~]
// in progress, [ ] pending (as in Neovim's chat).
func planMark(s acp.PlanEntryStatus) string {
	switch s {
	case acp.PlanEntryStatusCompleted:
		return "[x]"
	case acp.PlanEntryStatusInProgress:
		return "[~]"
	}
	return "[ ]"
}

// aside runs f, which writes to stderr, after ending the answer's line.
func (c *console) aside(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endLineLocked()
	f()
}

func (c *console) endLine() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endLineLocked()
}

func (c *console) endLineLocked() {
	if c.midLine {
		fmt.Fprintln(c.out)
		c.midLine = false
	}
}
