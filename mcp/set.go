package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of Options.
const (
	StartTimeout = 30 * time.Second // a server's start, handshake and tool list
	CallTimeout  = 60 * time.Second // one tools/call
	StopTimeout  = 2 * time.Second  // after stdin closes, before SIGTERM (and again before SIGKILL)
)

// Options configure Start. A zero duration means its default.
type Options struct {
	Dir     string   // a stdio server's working directory
	Env     []string // a stdio server's base environment ("NAME=value"); its own Env goes on top
	Version string   // hearth's, told to the servers

	StartTimeout time.Duration
	CallTimeout  time.Duration
	StopTimeout  time.Duration

	Log *slog.Logger // the SDK's log; nil discards it
}

func (o Options) log() *slog.Logger {
	if o.Log == nil {
		return discard
	}
	return o.Log
}

func (o Options) stopTimeout() time.Duration  { return orDefault(o.StopTimeout, StopTimeout) }
func (o Options) callTimeout() time.Duration  { return orDefault(o.CallTimeout, CallTimeout) }
func (o Options) startTimeout() time.Duration { return orDefault(o.StartTimeout, StartTimeout) }

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Tool is one tool of a server, as offered to the model.
type Tool struct {
	Name        string          // model-facing: mcp__server__tool, sanitized (name.go)
	Server      string          // the server's name, as configured
	Remote      string          // the tool's name on the server
	Title       string          // for the editor
	Description string          // for the model
	Parameters  json.RawMessage // JSON Schema object, keys sorted: the same bytes every time
	ReadOnly    bool            // the server says it changes nothing (annotations.readOnlyHint)
}

// Set is the MCP servers of one session; a nil *Set has none. Created by Start when the session
// opens; its tool list is fixed from then on (the model's requests carry it,
// byte for byte). Close stops the servers; calls after it fail.
type Set struct {
	servers  []Server
	opts     Options
	conns    map[string]*conn // by server name; only those that started
	tools    []Tool           // sorted by Name
	byName   map[string]int
	problems []string
}

// Start connects to every server at once, each within the start timeout,
// and lists their tools. A server that fails is left out and described in
// Problems; Start itself never fails.
func Start(ctx context.Context, servers []Server, o Options) *Set {
	s := &Set{servers: servers, opts: o, conns: map[string]*conn{}, byName: map[string]int{}}
	type started struct {
		c     *conn
		tools []*sdk.Tool
		err   error
	}
	out := make([]started, len(servers))
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for i, srv := range servers {
		if err := srv.Validate(); err != nil {
			out[i].err = err
			continue
		}
		if seen[srv.Name] {
			out[i].err = errors.New("another server has this name; this one is left out")
			continue
		}
		seen[srv.Name] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			sctx, cancel := context.WithTimeout(ctx, o.startTimeout())
			defer cancel()
			c, err := connect(sctx, srv, o)
			if err != nil {
				out[i].err = err
				return
			}
			var tools []*sdk.Tool
			for t, err := range c.cs.Tools(sctx, nil) {
				if err != nil {
					c.close()
					out[i].err = c.explain(fmt.Errorf("list its tools: %w", err))
					return
				}
				tools = append(tools, t)
			}
			out[i] = started{c: c, tools: tools}
		}()
	}
	wg.Wait()
	taken := map[string]bool{}
	for i, st := range out {
		srv := servers[i]
		if st.err != nil {
			s.problems = append(s.problems, fmt.Sprintf("MCP server %q did not start: %v", srv.Name, st.err))
			continue
		}
		s.conns[srv.Name] = st.c
		for _, t := range st.tools {
			name := unique(toolName(srv.Name, t.Name), srv.Name+"\x00"+t.Name, taken)
			taken[name] = true
			s.tools = append(s.tools, newTool(name, srv.Name, t))
		}
	}
	sort.Slice(s.tools, func(i, j int) bool { return s.tools[i].Name < s.tools[j].Name })
	for i, t := range s.tools {
		s.byName[t.Name] = i
	}
	return s
}

func newTool(name, server string, t *sdk.Tool) Tool {
	title := t.Title
	if title == "" && t.Annotations != nil {
		title = t.Annotations.Title
	}
	if title == "" {
		title = t.Name
	}
	desc := t.Description
	if desc == "" {
		desc = fmt.Sprintf("%s (a tool of the MCP server %q)", title, server)
	}
	return Tool{Name: name, Server: server, Remote: t.Name, Title: title, Description: desc,
		Parameters: parameters(t.InputSchema), ReadOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint}
}

// parameters is a tool's input schema as a function's parameters: always
// an object schema with properties (the API requires both), encoded with
// sorted keys so that the bytes never change.
func parameters(schema any) json.RawMessage {
	m, _ := schema.(map[string]any)
	if m == nil {
		if b, err := json.Marshal(schema); err == nil {
			json.Unmarshal(b, &m)
		}
	}
	if m == nil {
		m = map[string]any{}
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	if m["type"] == "object" {
		if _, ok := m["properties"]; !ok {
			m["properties"] = map[string]any{}
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// Servers returns the configuration the set was started with.
func (s *Set) Servers() []Server {
	if s == nil {
		return nil
	}
	return s.servers
}

// Tools returns the tools of the servers that started, sorted by Name.
func (s *Set) Tools() []Tool {
	if s == nil {
		return nil
	}
	return s.tools
}

// Problems describes the servers that did not start, for the user.
func (s *Set) Problems() []string {
	if s == nil {
		return nil
	}
	return s.problems
}

// Lookup returns the tool the model knows as name.
func (s *Set) Lookup(name string) (Tool, bool) {
	if s == nil {
		return Tool{}, false
	}
	i, ok := s.byName[name]
	if !ok {
		return Tool{}, false
	}
	return s.tools[i], true
}

// Call runs the tool the model knows as name with args (a JSON object),
// within the call timeout. Every failure is a Result with IsError and a
// message the model can act on.
func (s *Set) Call(ctx context.Context, name string, args json.RawMessage) Result {
	t, ok := s.Lookup(name)
	if !ok {
		return Result{Output: fmt.Sprintf("error: no MCP tool named %q", name), IsError: true}
	}
	c := s.conns[t.Server]
	timeout := s.opts.callTimeout()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := c.cs.CallTool(cctx, &sdk.CallToolParams{Name: t.Remote, Arguments: args})
	switch {
	case err == nil && res.IsError:
		return Result{Output: "error: " + resultText(res), IsError: true}
	case err == nil:
		return Result{Output: resultText(res)}
	case ctx.Err() != nil:
		return Result{Output: "error: cancelled by the user", IsError: true}
	case cctx.Err() != nil:
		return Result{Output: fmt.Sprintf("error: the MCP server %q did not answer %s within %s; it may be stuck. Do not call it again unless the user asks", t.Server, t.Remote, timeout), IsError: true}
	case errors.Is(err, sdk.ErrConnectionClosed):
		return Result{Output: fmt.Sprintf("error: the MCP server %q is not running (%v); its tools are unavailable in this session", t.Server, c.explain(err)), IsError: true}
	default:
		return Result{Output: fmt.Sprintf("error: the MCP server %q failed the call of %s: %v", t.Server, t.Remote, c.explain(err)), IsError: true}
	}
}

// Close stops every server, at once, and waits for them.
func (s *Set) Close() {
	if s == nil {
		return
	}
	var wg sync.WaitGroup
	for _, c := range s.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.close()
		}()
	}
	wg.Wait()
}
