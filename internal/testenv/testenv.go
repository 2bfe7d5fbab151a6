// Package testenv keeps hearth's tests away from the user's own hearth.
// A test binary's TestMain calls Isolate before m.Run: the user's HEARTH_*,
// OPENAI_* and XDG_* variables are removed from the process (so no test, and
// no daemon or CLI process a test starts, reads the user's key, socket,
// configuration or data directory, or writes there), and HOME points at a
// temporary directory. Go's own caches are pinned first, so `go build` in a
// test still finds them.
//
// Imports: none of hearth's; only tests import it.
package testenv

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Isolate scrubs the environment as the package doc says and returns a
// function that removes the temporary HOME. It is meant for TestMain, before
// any test runs (it changes the process environment).
func Isolate() (cleanup func(), err error) {
	// Pin Go's directories while HOME and XDG_* still locate them.
	if out, err := exec.Command("go", "env", "-json", "GOCACHE", "GOMODCACHE", "GOPATH").Output(); err == nil {
		var dirs map[string]string
		if json.Unmarshal(out, &dirs) == nil {
			for k, v := range dirs {
				if v != "" {
					os.Setenv(k, v)
				}
			}
		}
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		for _, p := range []string{"HEARTH_", "OPENAI_", "XDG_"} {
			if strings.HasPrefix(name, p) {
				os.Unsetenv(name)
			}
		}
	}
	home, err := os.MkdirTemp("", "hearth-test-home")
	if err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	os.Setenv("HOME", home)
	os.Setenv("GOTELEMETRY", "off")
	return func() { os.RemoveAll(home) }, nil
}

// Main is TestMain's body for packages that need nothing else: isolate,
// run, clean up, exit.
func Main(run func() int) {
	cleanup, err := Isolate()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := run()
	cleanup()
	os.Exit(code)
}
