package mcp

import (
	"os"
	"testing"

	"github.com/hearthd/hearth/internal/testenv"
	"github.com/hearthd/hearth/mcp/mcptest"
)

// TestMain serves the test MCP server when the binary is re-executed as
// one, and otherwise runs the tests away from the user's environment.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == mcptest.Subcommand {
		os.Exit(mcptest.Serve(os.Args[2:]))
	}
	testenv.Main(m.Run)
}
