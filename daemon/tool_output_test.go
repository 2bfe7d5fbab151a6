package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/session/sim"
)

// One rule for every tool's output in the model's view: read_file of a long
// file and an MCP server's long answer both reach the model within the
// budget (HEARTH_TOOL_OUTPUT_TOKENS), their head and tail kept, with a line
// saying how much was cut; the editor shows what the model saw.
func TestToolOutputsKeptWithinTheBudget(t *testing.T) {
	const budget = 500 // tokens: about 2,000 bytes
	td := startDaemonWith(t, sim.Options{}, "", func(c *Config) { c.ToolOutputTokens = budget })
	var lines strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&lines, "line %d of a long file\n", i)
	}
	if err := os.WriteFile(filepath.Join(td.root, "long.txt"), []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	a := &asker{answers: []string{"allow_once"}}
	ed := td.connectAnswering(a.onCall)
	ed.initialize()
	srv, _ := mcpTestServer(t, "tests")
	id := ed.newSessionWith(td.root, srv)

	if stop := ed.prompt(id, "read long.txt"); stop != acp.StopReasonEndTurn {
		t.Fatalf("read: stop %s", stop)
	}
	out := lastToolOutput(t, td)
	if len(out) > 4*budget+300 || !strings.Contains(out, "line 1 of a long file") || !strings.Contains(out, "line 2000 of a long file") ||
		strings.Contains(out, "line 1000 of a long file") || !strings.Contains(out, "hearth cut about") {
		t.Fatalf("read_file's output as the model saw it (%d bytes):\n%s", len(out), out)
	}

	long := strings.Repeat("m", 20_000) + "z"
	if stop := ed.prompt(id, `sim:calls=1 sim:tool=mcp__tests__echo sim:args={"text":"`+long+`"}`); stop != acp.StopReasonEndTurn {
		t.Fatalf("echo: stop %s", stop)
	}
	out = lastToolOutput(t, td)
	if len(out) > 4*budget+300 || !strings.HasPrefix(out, "echo: mmm") || !strings.HasSuffix(out, "mmz") || !strings.Contains(out, "hearth cut about") {
		t.Fatalf("the MCP server's output as the model saw it (%d bytes): %.300s…", len(out), out)
	}
	shown := false
	for _, u := range ed.updates() {
		if tc := u.ToolCallUpdate; tc != nil {
			for _, c := range tc.Content {
				if c.Content != nil && c.Content.Content.Text != nil && strings.HasSuffix(c.Content.Content.Text.Text, "mmz") {
					shown = len(c.Content.Content.Text.Text) < 4*budget+300
				}
			}
		}
	}
	if !shown {
		t.Error("the editor was not shown the clipped output")
	}
}
