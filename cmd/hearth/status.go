package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/daemon"
	"github.com/hearthd/hearth/installer"
	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/safesocket"
)

// errNotRunning is exit code 3, as `status` documents.
func errNotRunning(cfg daemon.Config) error {
	return &exitError{3, fmt.Errorf("the hearth daemon is not running (socket %s);\nstart it with `hearth serve`, or let `hearth acp` start it", cfg.Socket)}
}

// connect dials the daemon and initializes an rpc client; an unsafe socket
// is refused (safesocket.Dial), a missing one is errNotRunning.
func connect(ctx context.Context, cfg daemon.Config) (*rpc.Client, error) {
	c, err := safesocket.Dial(ctx, cfg.Socket)
	if errors.Is(err, safesocket.ErrUnsafe) {
		return nil, err
	}
	if err != nil {
		return nil, errNotRunning(cfg)
	}
	client := rpc.NewClient(c, rpc.ClientOptions{})
	var init acp.InitializeResponse
	if err := client.Call(ctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}, &init); err != nil {
		client.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	return client, nil
}

func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("status", stderr)
	asJSON := fs.Bool("json", false, "print the status as JSON (the structs the daemon serves)")
	wide := fs.Bool("wide", false, "one line per figure and a table of the workspaces, however wide (default: fit 80 columns)")
	if err := fs.Parse(args); err != nil {
		return &exitError{2, err}
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	client, err := connect(cctx, cfg)
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) && *asJSON {
			fmt.Fprintln(stdout, `{"running":false}`)
		}
		return err
	}
	defer client.Close()
	var st rpc.Status
	if err := client.Call(cctx, rpc.MethodHearthStatus, nil, &st); err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, st)
	}
	printStatus(stdout, st, *wide)
	fmt.Fprintf(stdout, "service     %s\n", serviceLine(cctx))
	return nil
}

// serviceLine says whether the per-user service is installed and running;
// the daemon cannot know (it may run under the service or not).
func serviceLine(ctx context.Context) string {
	p, err := servicePlan()
	if err != nil {
		return "not supported here (" + err.Error() + ")"
	}
	if _, err := os.Stat(p.Unit.Path); err != nil {
		return "not installed (hearth install)"
	}
	m, err := installer.NewManager(ctx, p)
	if err != nil {
		return "installed at " + p.Unit.Path + "; state unknown: " + err.Error()
	}
	state, err := m.State(ctx)
	if err != nil {
		return "installed at " + p.Unit.Path + "; state unknown: " + err.Error()
	}
	return "installed at " + p.Unit.Path + ", " + state
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// statusWidth is what the default output fits: a terminal's 80 columns.
const statusWidth = 80

// printStatus shows the daemon's status; paths, the model's name and the
// API's reasons are made visible (visible.go). wide prints each figure on
// one line and the workspaces as one table; else lines are wrapped to fit
// statusWidth and each workspace is a block of short lines.
func printStatus(w io.Writer, st rpc.Status, wide bool) {
	field := func(name, value string) {
		if wide {
			fmt.Fprintf(w, "%-12s%s\n", name, value)
			return
		}
		fmt.Fprintf(w, "%-12s%s\n", name, wrap(value, 12, statusWidth))
	}
	field("daemon", fmt.Sprintf("hearth %s, pid %d, up %s", st.Version, st.PID, time.Since(st.Started).Round(time.Second)))
	field("socket", visibleLine(st.Socket))
	field("data", visibleLine(st.DataDir))
	api := visibleLine(st.BaseURL)
	if st.Simulator {
		api += " (built-in simulator)"
	}
	field("api", api)
	field("api key", st.APIKey)
	field("model", visibleLine(st.Model))
	field("profile", profileLine(st.Profile))
	field("clients", strconv.Itoa(st.Clients))
	field("workspaces", fmt.Sprintf("%s open, %d closed after being idle",
		plural(len(st.Workspaces), "workspace"), st.Sessions.WorkspacesClosed))
	field("sessions", fmt.Sprintf("%s open (%d idle), %d closed (idle, or by their editors)",
		plural(st.Sessions.Open, "session"), st.Sessions.Idle, st.Sessions.Closed))
	if len(st.Workspaces) == 0 {
		fmt.Fprintln(w, "\nno open workspaces")
		return
	}
	fmt.Fprintln(w)
	if wide {
		workspaceTable(w, st.Workspaces)
	} else {
		workspaceBlocks(w, st.Workspaces)
	}
	for _, ws := range st.Workspaces {
		var notes []string
		if ws.Fallback != "" {
			notes = append(notes, "on HTTP because "+visibleLine(ws.Fallback))
		}
		if why, ok := strings.CutPrefix(ws.LaneMode, "off: "); ok {
			notes = append(notes, "one WebSocket per session: "+visibleLine(why))
		}
		if ws.Watch != "" && ws.Watch != "inotify" && ws.Watch != "fsnotify" {
			notes = append(notes, "file watching is "+ws.Watch)
		}
		if wide && ws.RateLimits != nil {
			notes = append(notes, rateLine(*ws.RateLimits, time.Now()))
		}
		for _, n := range notes {
			line := visibleLine(ws.Root) + ": " + n
			if !wide {
				line = wrap(line, 2, statusWidth)
			}
			fmt.Fprintln(w, line)
		}
	}
}

// workspaceTable is --wide's table: one row per workspace, every figure.
func workspaceTable(w io.Writer, list []rpc.WorkspaceStatus) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKSPACE\tMODEL\tSTATE\tTRANSPORT\tCONNS\tAGE\tSESSIONS\tHANDSHAKES\tWARM-UPS\tFULL\tINCREMENTAL\tRETRIES\tSENT\tON WIRE\tSAVED\tTOKENS IN/OUT\tCACHED")
	for _, ws := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", visibleLine(ws.Root), visibleLine(ws.Model), visibleLine(ws.State), ws.Transport, ws.Connections,
			ws.ConnAge().Round(time.Second), ws.Sessions, ws.Handshakes,
			ws.Warmups, ws.FullRequests, ws.IncrementalRequests, ws.Retries, bytesHuman(ws.BytesSent),
			bytesHuman(ws.WireBytesSent), bytesHuman(ws.BytesSaved), tokensInOut(ws.Tokens), cachedShare(ws.Tokens))
	}
	tw.Flush()
}

// workspaceBlocks is the default view of the workspaces: the root on a line
// of its own, then the same figures as the wide table in short lines.
func workspaceBlocks(w io.Writer, list []rpc.WorkspaceStatus) {
	for i, ws := range list {
		if i > 0 {
			fmt.Fprintln(w)
		}
		lines := []string{
			fmt.Sprintf("%s, %s on %s: %s for %s, %s", visibleLine(ws.Model), visibleLine(ws.State), ws.Transport,
				plural(ws.Connections, "connection"), ws.ConnAge().Round(time.Second), plural(ws.Sessions, "session")),
			fmt.Sprintf("requests: %s, %s, %d full, %d incremental, %d retried", plural(int(ws.Handshakes), "handshake"),
				plural(int(ws.Warmups), "warm-up"), ws.FullRequests, ws.IncrementalRequests, ws.Retries),
			fmt.Sprintf("sent %s (%s on the wire), saved %s", bytesHuman(ws.BytesSent), bytesHuman(ws.WireBytesSent), bytesHuman(ws.BytesSaved)),
			fmt.Sprintf("tokens in/out %s, cached %s", tokensInOut(ws.Tokens), cachedShare(ws.Tokens)),
		}
		if ws.RateLimits != nil {
			lines = append(lines, rateLine(*ws.RateLimits, time.Now()))
		}
		fmt.Fprintln(w, visibleLine(ws.Root))
		for _, l := range lines {
			fmt.Fprintln(w, "  "+wrap(l, 4, statusWidth))
		}
	}
}

// wrap breaks s at spaces so that no line passes width, the first starting
// at column indent and the others indented by indent spaces; a word longer
// than a line (a path) stays whole.
func wrap(s string, indent, width int) string {
	return wrapFrom(s, indent, indent, width)
}

// wrapFrom is wrap with the first line starting at column col, right of
// the hanging indent: when even s's first word does not fit there, s
// starts on the next line.
func wrapFrom(s string, col, indent, width int) string {
	var b strings.Builder
	for i, word := range strings.Split(s, " ") {
		if i == 0 && col > indent && col+utf8.RuneCountInString(word) > width {
			b.WriteString("\n" + strings.Repeat(" ", indent))
			col = indent
		}
		if i > 0 {
			if col+1+utf8.RuneCountInString(word) > width {
				b.WriteString("\n" + strings.Repeat(" ", indent))
				col = indent
			} else {
				b.WriteByte(' ')
				col++
			}
		}
		b.WriteString(word)
		col += utf8.RuneCountInString(word)
	}
	return b.String()
}

func bytesHuman(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// profileLine says in one line what hearth takes the model to be.
func profileLine(p rpc.Profile) string {
	var b strings.Builder
	b.WriteString(visibleLine(p.Family))
	if p.ContextWindow > 0 {
		fmt.Fprintf(&b, ": window %s tokens", thousands(p.ContextWindow))
	} else {
		b.WriteString(": window unknown (compacts when the API refuses a request for its length)")
	}
	switch {
	case p.Reasoning == "none" || p.Reasoning == "":
		b.WriteString(", no reasoning")
	case len(p.ReasoningLevels) > 0:
		fmt.Fprintf(&b, ", reasoning %s (of %s)", visibleLine(p.Reasoning), visibleLine(strings.Join(p.ReasoningLevels, ", ")))
	default:
		fmt.Fprintf(&b, ", reasoning %s", visibleLine(p.Reasoning))
	}
	if p.Images {
		b.WriteString(", images")
	}
	if p.ParallelTools {
		b.WriteString(", parallel tool calls")
	}
	fmt.Fprintf(&b, ", tool output up to %s tokens", thousands(p.ToolOutputTokens))
	if p.PatchStyle != "" {
		fmt.Fprintf(&b, ", apply_patch (%s)", visibleLine(p.PatchStyle))
	}
	return b.String()
}

// thousands writes n with a comma every three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
