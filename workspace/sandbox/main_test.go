package sandbox

import (
	"os"
	"testing"

	"github.com/hearthd/hearth/internal/testenv"
)

// sandboxSubcommand is the hidden subcommand under which this test binary,
// like hearth itself, runs the sandbox helper.
const sandboxSubcommand = "__sandbox-exec"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandboxSubcommand {
		os.Exit(Exec(os.Args[2:]))
	}
	if len(os.Args) > 1 && netProbes[os.Args[1]] != nil {
		os.Exit(netProbes[os.Args[1]](os.Args[2:]))
	}
	testenv.Main(func() int { // away from the user's HEARTH_*, OPENAI_*, XDG_* and HOME
		defer func() {
			if probeDir != "" {
				os.RemoveAll(probeDir)
			}
		}()
		return m.Run()
	})
}

// useSandbox makes the shell tool run its commands through this test
// binary's helper, denying deny, until the test ends.
func useSandbox(t testing.TB, deny ...string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	Set(Config{Helper: []string{exe, sandboxSubcommand}, Deny: deny})
	t.Cleanup(func() { Set(Config{}) })
}
