package daemon

import (
	"os"
	"testing"

	"github.com/hearthd/hearth/internal/testenv"
	"github.com/hearthd/hearth/mcp/mcptest"
)

// TestMain keeps the tests away from the user's HEARTH_*, OPENAI_* and XDG_*
// locations, and from HOME. Re-executed as mcptest.Subcommand, the binary
// is the MCP server of mcp_test.go.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == mcptest.Subcommand {
		os.Exit(mcptest.Serve(os.Args[2:]))
	}
	testenv.Main(m.Run)
}
