package workspace

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hearthd/hearth/workspace/sandbox"
)

// newTree creates, in a fresh temp dir, a workspace directory "root" and a
// sibling "outside" holding secret.txt, and opens the workspace. Both paths
// are returned with symlinks evaluated (macOS puts TempDir under a symlink).
func newTree(t testing.TB) (r *Root, rootDir, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rootDir = filepath.Join(base, "root")
	outside = filepath.Join(base, "outside")
	mkdir(t, rootDir)
	writeFile(t, filepath.Join(outside, "secret.txt"), "secret needle\n")
	r, err = Open(rootDir)
	if err != nil {
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

// call runs one tool call with args given as a JSON string.
func call(t testing.TB, ts *Toolset, name, args string) Result {
	t.Helper()
	return ts.Run(context.Background(), name, json.RawMessage(args))
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

// countdownCtx is a context that turns cancelled on the call to Err after
// the first `after`. It cancels "in the middle" of long work without sleeps
// or timing, and checks counts how often the code polled it, so a test can
// assert the work stopped at the first check after the cancellation. Done is
// closed when the cancellation is first seen.
type countdownCtx struct {
	context.Context
	after  int64
	checks atomic.Int64
	done   chan struct{}
	once   sync.Once
}

func newCountdownCtx(after int64) *countdownCtx {
	return &countdownCtx{Context: context.Background(), after: after, done: make(chan struct{})}
}

func (c *countdownCtx) Err() error {
	if c.checks.Add(1) > c.after {
		c.once.Do(func() { close(c.done) })
		return context.Canceled
	}
	return nil
}

func (c *countdownCtx) Done() <-chan struct{} { return c.done }

// removePrivateTmp removes, when the test ends, the /tmp a sandboxed
// command of the workspace at root (canonical) got (sandbox's privateTmpDir).
func removePrivateTmp(t testing.TB, root string) {
	t.Cleanup(func() { os.RemoveAll(filepath.Join(os.TempDir(), sandbox.PrivateTmpRel(root))) })
}

// body is the output part of a shell result: what follows "Output:".
func body(out string) string {
	if _, b, ok := strings.Cut(out, "\nOutput:\n"); ok {
		return b
	}
	return out
}
