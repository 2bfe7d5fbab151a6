package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/mcp"
	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/workspace"
	"github.com/hearthd/hearth/workspace/sandbox"
)

// The MCP servers an editor passes in session/new and session/load belong to
// the session: started before its conversation opens (their tools are in its
// warm-up), stopped when it closes. A server that does not start is told to
// the editor at the next prompt; the session works without it.

// mcpKind is the ACP tool kind of every MCP tool: hearth cannot know more.
const mcpKind = "other"

// wireMCPServer is ACP's McpServer as sent: stdio ({name, command, args,
// env}, no type or "stdio"), http and sse ({type, name, url, headers}).
// Decoded here rather than by acp-go-sdk's union, which takes any object
// with a missing field for an HTTP server.
type wireMCPServer struct {
	Type    string          `json:"type"`
	Name    string          `json:"name"`
	Command string          `json:"command"`
	Args    []string        `json:"args"`
	Env     []wireNameValue `json:"env"`
	URL     string          `json:"url"`
	Headers []wireNameValue `json:"headers"`
}

type wireNameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// mcpServers decodes and checks the mcpServers of session/new or
// session/load; a bad entry is -32602 naming its field.
func mcpServers(params json.RawMessage) ([]mcp.Server, error) {
	var p struct {
		McpServers []json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, rpc.InvalidParams("mcpServers", "%v", err)
	}
	var out []mcp.Server
	for i, raw := range p.McpServers {
		field := fmt.Sprintf("mcpServers.%d", i)
		var w wireMCPServer
		if err := json.Unmarshal(raw, &w); err != nil {
			return nil, rpc.InvalidParams(field, "%v", err)
		}
		s := mcp.Server{Name: w.Name, Transport: w.Type, Command: w.Command, Args: w.Args, URL: w.URL}
		switch w.Type {
		case "", mcp.Stdio:
			s.Transport = mcp.Stdio
			for _, e := range w.Env {
				s.Env = append(s.Env, e.Name+"="+e.Value)
			}
		case mcp.HTTP, mcp.SSE:
			for _, h := range w.Headers {
				s.Headers = append(s.Headers, [2]string{h.Name, h.Value})
			}
		default:
			return nil, rpc.InvalidParams(field+".type", "hearth connects to stdio, http and sse MCP servers, not %q", w.Type)
		}
		var fe *mcp.FieldError
		if errors.As(s.Validate(), &fe) {
			return nil, rpc.InvalidParams(field+"."+fe.Field, "%s", fe.Reason)
		}
		out = append(out, s)
	}
	return out, nil
}

// prepareNew is session/new's first stage, on the read loop. Without MCP
// servers the whole call runs there, as it always has; with them, the rest
// runs concurrently, since starting them may take seconds and the
// connection must keep serving (permission answers, cancels) meanwhile.
func (c *clientConn) prepareNew(ctx context.Context, params json.RawMessage) (func(context.Context) (any, error), error) {
	if !c.initialized.Load() {
		return nil, rpc.ErrNotInitialized
	}
	if servers, err := mcpServers(params); err != nil || len(servers) == 0 {
		res, err := c.newSession(jsonrpc2.DetachContext(ctx), params)
		if err != nil {
			return nil, err
		}
		return func(rctx context.Context) (any, error) {
			c.offerAfterReply(rctx, string(res.SessionId), false)
			return res, nil
		}, nil
	}
	params = bytes.Clone(params)
	return func(rctx context.Context) (any, error) {
		res, err := c.newSession(jsonrpc2.DetachContext(rctx), params)
		if err != nil {
			return nil, err
		}
		c.offerAfterReply(rctx, string(res.SessionId), false)
		return res, nil
	}, nil
}

// startMCP starts servers for a session in w whose working directory is
// cwd (absolute; "" for the root): stdio servers run there, as the
// session's shell does, under cfg. Nil when there are none.
func startMCP(ctx context.Context, cfg Config, log *slog.Logger, w *openWorkspace, cwd string, servers []mcp.Server) *mcp.Set {
	if len(servers) == 0 {
		return nil
	}
	dir, _ := sessionDir(w.root.Path(), cwd)
	set := mcp.Start(ctx, servers, mcp.Options{
		Dir: dir, Env: sandbox.ToolEnv(), Version: cfg.Version,
		CallTimeout: cfg.MCPCallTimeout,
	})
	for _, p := range set.Problems() {
		log.Warn("MCP server left out", "root", w.root.Path(), "problem", p)
	}
	return set
}

// specsWith is the tool list of a session: the workspace's tools, then the
// MCP tools (sorted by name). Built once per set: the same bytes on every
// request.
func specsWith(ws []json.RawMessage, set *mcp.Set) []json.RawMessage {
	tools := set.Tools()
	if len(tools) == 0 {
		return ws
	}
	specs := append(make([]json.RawMessage, 0, len(ws)+len(tools)), ws...)
	for _, t := range tools {
		specs = append(specs, workspace.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters}.Spec())
	}
	return specs
}

// setMCP gives s the servers of set (nil: none), to be told to the editor
// at its next prompt, and returns the set it had.
func (s *openSession) setMCP(set *mcp.Set) *mcp.Set {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.mcp
	s.mcp, s.specs = set, s.offer.apply(specsWith(s.ws.specsFor(toolStyle{s.patchStyle, s.shellStyle}), set))
	s.mcpNotes = append(s.mcpNotes, set.Problems()...)
	return old
}

// refreshMCP makes an open session's servers those a session/load gave
// (started as startMCP does):
// nothing happens when they are the same; else the new ones start and
// replace the old, and the session's next request carries the new tool list
// in full. While a turn runs the session keeps its servers.
func (s *openSession) refreshMCP(ctx context.Context, cfg Config, log *slog.Logger, servers []mcp.Server) {
	s.mu.Lock()
	same, busy := mcp.Same(s.mcp.Servers(), servers), s.cancel != nil
	s.mu.Unlock()
	switch {
	case same:
		return
	case busy:
		s.mu.Lock()
		s.mcpNotes = append(s.mcpNotes, "the session keeps its MCP servers: a turn was running when it was loaded with others")
		s.mu.Unlock()
		return
	}
	s.setMCP(startMCP(ctx, cfg, log, s.ws, s.cwd, servers)).Close()
}

// tellMCP shows the editor what went wrong with the session's MCP servers
// since its last prompt.
func (s *openSession) tellMCP(sink session.Sink) {
	s.mu.Lock()
	notes := s.mcpNotes
	s.mcpNotes = nil
	s.mu.Unlock()
	for _, n := range notes {
		session.Notify(sink, session.NoticeWarning, "hearth: "+n+"; the session goes on without it")
	}
}

// closeMCP stops the session's servers.
func (s *openSession) closeMCP() {
	s.mu.Lock()
	set := s.mcp
	s.mcp = nil
	s.mu.Unlock()
	set.Close()
}

// close closes the session's conversation, stops its MCP servers and ends
// the processes its exec_command calls left running.
func (s *openSession) close() {
	s.conv.Close()
	s.closeMCP()
	s.procs.Close()
}

// mcpTool returns the session's MCP tool the model calls name, and its set.
func (s *openSession) mcpTool(name string) (mcp.Tool, *mcp.Set, bool) {
	s.mu.Lock()
	set := s.mcp
	s.mu.Unlock()
	t, ok := set.Lookup(name)
	return t, set, ok
}

// runMCP runs a call of an MCP tool: a read-only one at once, any other by
// the session's mode and the user's permission, as shell is.
func (t *sessionTools) runMCP(ctx context.Context, call session.ToolCall, tool mcp.Tool, set *mcp.Set) session.ToolResult {
	title := tool.Server + ": " + tool.Title
	args := json.RawMessage(call.Arguments)
	if strings.TrimSpace(call.Arguments) == "" {
		args = json.RawMessage(`{}`)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		// An invalid call is answered without bothering the user.
		return session.ToolResult{Output: fmt.Sprintf("error: the arguments of %s must be a JSON object matching its parameters; got %q", call.Name, call.Arguments),
			IsError: true, Title: title, Kind: mcpKind}
	}
	if !tool.ReadOnly {
		wt := workspace.Tool{Name: call.Name, Kind: mcpKind}
		pv := workspace.Preview{Title: title}
		t.s.broadcast(previewUpdate(t.s, call, wt, pv), nil)
		if res, ok := t.authorize(ctx, call, wt, pv); !ok {
			res.Kind, res.Title = mcpKind, title
			return *res
		}
	}
	r := set.Call(ctx, call.Name, args)
	return session.ToolResult{Output: r.Output, IsError: r.IsError, Title: title, Kind: mcpKind}
}
