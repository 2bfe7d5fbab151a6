//go:build unix

package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The sandbox's tests run commands as the workspace's shell tool does (it
// imports this package, so they cannot call it): Run, then the Outcome's
// Report, and the network note for a failed command with the network off.
// What they check is what the model reads.

// toolResult is what the shell tool returns for one command.
type toolResult struct {
	Output  string
	IsError bool
	Title   string
}

// shellTool runs shell calls in a workspace directory, with a network and
// a live view like the workspace's Toolset copies have. A plain value per test.
type shellTool struct {
	root string
	net  Network
	live func(string)
}

// testRoot is an open workspace directory: its path, symlinks evaluated.
type testRoot struct{ path string }

func openRoot(dir string) (*testRoot, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	return &testRoot{path: real}, nil
}

func (r *testRoot) Path() string { return r.path }
func (r *testRoot) Close() error { return nil }

func newShellTool(r *testRoot) *shellTool { return &shellTool{root: r.path} }

func (ts *shellTool) WithNetwork(net Network) *shellTool {
	c := *ts
	c.net = net
	return &c
}

func (ts *shellTool) WithLive(show func(string)) *shellTool {
	c := *ts
	c.live = show
	return &c
}

// Run runs the shell call name ("shell") with args {"command", "timeout_ms"}.
func (ts *shellTool) Run(ctx context.Context, name string, raw json.RawMessage) toolResult {
	var a struct {
		Command   string `json:"command"`
		TimeoutMS int    `json:"timeout_ms"`
	}
	if name != "shell" || json.Unmarshal(raw, &a) != nil {
		return toolResult{IsError: true, Output: fmt.Sprintf("not a shell call: %s %s", name, raw)}
	}
	if a.TimeoutMS == 0 {
		a.TimeoutMS = 120_000
	}
	timeout := time.Duration(a.TimeoutMS) * time.Millisecond
	run := Run(ctx, Command{Root: ts.root, Dir: ts.root, Line: a.Command, Net: ts.net, Timeout: timeout, Show: ts.live})
	if run.Err != nil {
		return toolResult{IsError: true, Output: fmt.Sprintf("cannot run the command: %v", run.Err)}
	}
	text, failed := run.Report(timeout)
	if failed && ts.net.Off && run.Confined {
		if enforced, _ := NetworkEnforced(); enforced {
			text += "\n" + NetworkNote(ts.net)
		}
	}
	return toolResult{Output: text, IsError: failed, Title: a.Command}
}

// withoutWall is a shell result with its wall time, which varies, as "T".
func withoutWall(out string) string {
	return wallTime.ReplaceAllString(out, "${1}T seconds\n")
}

var wallTime = regexp.MustCompile(`(?m)^(Wall time: )[0-9.]+ seconds\n`)

// reported is what the model reads of a command that ended with code and
// printed output, its wall time shown as "T".
func reported(code int, output string) string {
	return fmt.Sprintf("Exit code: %d\nWall time: T seconds\nOutput:\n%s", code, output)
}

// body is the output part of a shell result: what follows "Output:".
func body(out string) string {
	if _, b, ok := strings.Cut(out, "\nOutput:\n"); ok {
		return b
	}
	return out
}

// call runs one tool call with args given as a JSON string.
func call(t testing.TB, ts *shellTool, name, args string) toolResult {
	t.Helper()
	return ts.Run(context.Background(), name, json.RawMessage(args))
}

// runShell runs the shell tool with command and an optional timeout.
func runShell(t *testing.T, ts *shellTool, command string, timeoutMS int) toolResult {
	t.Helper()
	args := map[string]any{"command": command}
	if timeoutMS > 0 {
		args["timeout_ms"] = timeoutMS
	}
	return call(t, ts, "shell", mustJSON(t, args))
}

// pids returns the numbers the command printed as name=pid, by name.
func pids(t *testing.T, output string, names ...string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, name := range names {
		m := regexp.MustCompile(`(?m)^` + name + `=(\d+)$`).FindStringSubmatch(output)
		if m == nil {
			t.Fatalf("output does not show %s=<pid>:\n%s", name, output)
		}
		out[name], _ = strconv.Atoi(m[1])
	}
	return out
}

// mustJSON encodes v as a JSON string, for building arguments.
func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newTree creates, in a fresh temp dir, a workspace directory "root" and a
// sibling "outside" holding secret.txt, and opens the workspace. Both paths
// are returned with symlinks evaluated (macOS puts TempDir under a symlink).
func newTree(t testing.TB) (r *testRoot, rootDir, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rootDir = filepath.Join(base, "root")
	outside = filepath.Join(base, "outside")
	mkdir(t, rootDir)
	writeFile(t, filepath.Join(outside, "secret.txt"), "secret needle\n")
	if r, err = openRoot(rootDir); err != nil {
		t.Fatal(err)
	}
	removePrivateTmp(t, rootDir)
	return r, rootDir, outside
}

func mkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// writeFile writes content to path, creating its parent directories.
func writeFile(t testing.TB, path, content string) {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t testing.TB, target, link string) {
	t.Helper()
	mkdir(t, filepath.Dir(link))
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// removePrivateTmp removes, when the test ends, the /tmp a sandboxed
// command of the workspace at root (canonical) got (privateTmpDir).
func removePrivateTmp(t testing.TB, root string) {
	t.Cleanup(func() { os.RemoveAll(filepath.Join(os.TempDir(), PrivateTmpRel(root))) })
}
