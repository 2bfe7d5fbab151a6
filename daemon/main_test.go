package daemon

import (
	"os"
	"testing"

	"github.com/hearthd/hearth/internal/testenv"
	"github.com/hearthd/hearth/mcp/mcptest"
	"github.com/hearthd/hearth/workspace"
)

// sandboxSubcommand is the hidden subcommand under which this test binary,
// like hearth itself, runs the shell tool's sandbox helper.
const sandboxSubcommand = "__sandbox-exec"

// TestMain keeps the tests away from the user's HEARTH_*, OPENAI_* and XDG_*
// locations, and from HOME. Started as the sandbox helper, or as the
// network probe or the socket probe a sandboxed command runs, this binary
// is that instead; re-executed as mcptest.Subcommand, it is the MCP server
// of mcp_test.go.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandboxSubcommand {
		os.Exit(workspace.SandboxExec(os.Args[2:]))
	}
	if len(os.Args) > 2 && os.Args[1] == dialSubcommand {
		os.Exit(dialProbe(os.Args[2]))
	}
	if len(os.Args) > 1 && probes[os.Args[1]] != nil {
		os.Exit(probes[os.Args[1]](os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == mcptest.Subcommand {
		os.Exit(mcptest.Serve(os.Args[2:]))
	}
	testenv.Main(m.Run)
}
