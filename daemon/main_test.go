package daemon

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hearthd/hearth/internal/testenv"
	"github.com/hearthd/hearth/mcp/mcptest"
	"github.com/hearthd/hearth/workspace/sandbox"
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
		os.Exit(sandbox.Exec(os.Args[2:]))
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
	testenv.Main(func() int {
		defer removeCommandExe()
		return m.Run()
	})
}

// commandExeDir holds commandExe's copy; TestMain removes it.
var commandExeDir string

// commandExe is this test binary where a sandboxed command can run it: go
// test builds it under /tmp, of which commands see a private copy, so it
// is copied once to a directory under /var/tmp.
var commandExe = sync.OnceValues(func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if commandExeDir, err = os.MkdirTemp("/var/tmp", "hearth-daemon-test-"); err != nil {
		return "", err
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		return "", err
	}
	dst := filepath.Join(commandExeDir, filepath.Base(exe))
	return dst, os.WriteFile(dst, b, 0o755)
})

func removeCommandExe() {
	if commandExeDir != "" {
		os.RemoveAll(commandExeDir)
	}
}

// mustCommandExe is commandExe, or the test fails.
func mustCommandExe(t testing.TB) string {
	t.Helper()
	exe, err := commandExe()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}
