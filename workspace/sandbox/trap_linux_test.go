//go:build linux && cgo

package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// trapRun runs line in a fresh workspace's cell with Changes set, and
// returns what Changes was told (relative to the root) and what each
// told path held when it was first told, and the outcome.
func trapRun(t testing.TB, root, line string) ([]string, map[string]string, Outcome) {
	t.Helper()
	var mu sync.Mutex
	var told []string
	held := map[string]string{}
	run := Run(context.Background(), Command{Root: root, Dir: root, Line: line, Timeout: time.Minute,
		Changes: changeFunc(func(p string) {
			rel, _ := filepath.Rel(root, p)
			b, err := os.ReadFile(p)
			mu.Lock()
			defer mu.Unlock()
			told = append(told, rel)
			if _, ok := held[rel]; ok {
				return // the first time: what it held before the command
			}
			if err == nil {
				held[rel] = string(b)
			} else {
				held[rel] = "(absent)"
			}
		})})
	if run.Err != nil {
		t.Fatal(run.Err)
	}
	return told, held, run
}

func trapRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "a"), []byte("A"), 0o644)
	os.WriteFile(filepath.Join(root, "d"), []byte("D"), 0o755)
	os.Mkdir(filepath.Join(root, "sub"), 0o755)
	return root
}

// TestTrapTellsChangesBeforeTheyHappen: a command's creations, writes,
// removals, renames, links and mode changes in the workspace are told
// before they happen (what was told sees the file as it was), its reads
// and writes outside the workspace are not, and a command that changes
// nothing tells nothing.
func TestTrapTellsChangesBeforeTheyHappen(t *testing.T) {
	useSandbox(t)
	root := trapRoot(t)
	told, held, run := trapRun(t, root, `cat a >/dev/null; echo x > /tmp/x; touch c && rm d && echo more >> a && cd sub && mv ../c e && ln -s e f && chmod 600 ../a`)
	if !run.Trapped {
		t.Skip("the sandbox has no cells here") // cells need user namespaces
	}
	if run.ExitCode != 0 {
		t.Fatalf("exit %d: %s", run.ExitCode, run.Output)
	}
	want := []string{"c", "d", "a", "c", "sub/e", "sub/f"}
	for _, w := range want {
		if !slices.Contains(told, w) {
			t.Errorf("%s not told: told %q", w, told)
		}
	}
	if held["d"] != "D" || held["a"] != "A" || held["sub/e"] != "(absent)" {
		t.Errorf("told too late: %q", held)
	}
	for _, p := range told {
		if strings.HasPrefix(p, "..") {
			t.Errorf("told of %s, outside the workspace", p)
		}
	}
	told, _, run = trapRun(t, root, `cat a sub/e >/dev/null; ls >/dev/null; echo x > /tmp/y`)
	if len(told) != 0 || !run.Trapped {
		t.Errorf("a command that changes nothing told %q (trapped %v)", told, run.Trapped)
	}
}

// BenchmarkTrapCommand: a command that changes nothing, run in a cell
// with the trap (Changes set) and without.
func BenchmarkTrapCommand(b *testing.B) {
	useSandbox(b)
	root := trapRoot(b)
	for _, trapped := range []bool{false, true} {
		name := "untrapped"
		var changes ChangeHook
		if trapped {
			name, changes = "trapped", changeFunc(func(string) {})
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				run := Run(context.Background(), Command{Root: root, Dir: root, Line: "cat a >/dev/null", Timeout: time.Minute, Changes: changes})
				if run.Err != nil || run.ExitCode != 0 || run.Trapped != trapped {
					b.Fatalf("%+v", run)
				}
			}
		})
	}
}

// BenchmarkTrapSyscall: a command that truncates one workspace file 1000
// times, with the trap and without; the difference over 1000 is what a
// trapped syscall costs (Changes doing nothing).
func BenchmarkTrapSyscall(b *testing.B) {
	useSandbox(b)
	root := trapRoot(b)
	const line = `i=0; while [ $i -lt 1000 ]; do : > a; i=$((i+1)); done`
	for _, trapped := range []bool{false, true} {
		name := "untrapped"
		var changes ChangeHook
		if trapped {
			name, changes = "trapped", changeFunc(func(string) {})
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				run := Run(context.Background(), Command{Root: root, Dir: root, Line: line, Timeout: time.Minute, Changes: changes})
				if run.Err != nil || run.ExitCode != 0 {
					b.Fatalf("%+v", run)
				}
			}
		})
	}
}

// changeFunc is a ChangeHook that calls itself on each change.
type changeFunc func(string)

func (changeFunc) Trapped()          {}
func (f changeFunc) Change(p string) { f(p) }

// TestTrapRefusesIOUring: under the trap io_uring_setup fails with ENOSYS,
// so no ring writes a file past it.
func TestTrapRefusesIOUring(t *testing.T) {
	useSandbox(t)
	root := trapRoot(t)
	const probe = `python3 -c 'import ctypes, os; l = ctypes.CDLL(None, use_errno=True); p = ctypes.create_string_buffer(120); r = l.syscall(425, 1, p); print(r, os.strerror(ctypes.get_errno()) if r < 0 else "")'`
	_, _, run := trapRun(t, root, probe)
	if !run.Trapped || !strings.Contains(run.Output, "-1 Function not implemented") {
		t.Errorf("io_uring_setup under the trap: %q (trapped %v)", run.Output, run.Trapped)
	}
}
