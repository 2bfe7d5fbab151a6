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

// TestTrapTellsDirectories: a command's making and removing of
// directories in the workspace is told before it happens (mkdir, mkdir -p
// of each level, rmdir, rm -r's removal of the directory after its files).
func TestTrapTellsDirectories(t *testing.T) {
	useSandbox(t)
	root := trapRoot(t)
	os.Mkdir(filepath.Join(root, "empty"), 0o755)
	os.MkdirAll(filepath.Join(root, "tree", "in"), 0o755)
	os.WriteFile(filepath.Join(root, "tree", "in", "f"), []byte("F"), 0o644)
	var mu sync.Mutex
	wasDir := map[string]bool{}
	run := Run(context.Background(), Command{Root: root, Dir: root, Line: `mkdir -p x/y && mkdir z && rmdir empty && rm -r tree`, Timeout: time.Minute,
		Changes: changeFunc(func(p string) {
			rel, _ := filepath.Rel(root, p)
			fi, err := os.Lstat(p)
			mu.Lock()
			defer mu.Unlock()
			if _, ok := wasDir[rel]; !ok {
				wasDir[rel] = err == nil && fi.IsDir()
			}
		})})
	if run.Err != nil {
		t.Fatal(run.Err)
	}
	if !run.Trapped {
		t.Skip("the sandbox has no cells here") // cells need user namespaces
	}
	if run.ExitCode != 0 {
		t.Fatalf("exit %d: %s", run.ExitCode, run.Output)
	}
	for rel, want := range map[string]bool{"x": false, "x/y": false, "z": false, "empty": true, "tree": true, "tree/in": true} {
		if was, told := wasDir[rel]; !told || was != want {
			t.Errorf("%s: told %v, a directory when told %v; want told, %v", rel, told, was, want)
		}
	}
}

// BenchmarkTrapCommand: a command that changes nothing (`cat a`, no
// redirection), run in a cell with the trap (Changes set) and without,
// one after the other in each iteration so that the machine's load moves
// both alike; it reports each one's mean and the difference.
func BenchmarkTrapCommand(b *testing.B) {
	useSandbox(b)
	root := trapRoot(b)
	var took [2]time.Duration
	for b.Loop() {
		for i, changes := range []ChangeHook{nil, changeFunc(func(string) {})} {
			start := time.Now()
			run := Run(context.Background(), Command{Root: root, Dir: root, Line: "cat a", Timeout: time.Minute, Changes: changes})
			took[i] += time.Since(start)
			if run.Err != nil || run.ExitCode != 0 || run.Trapped != (changes != nil) {
				b.Fatalf("%+v", run)
			}
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(took[0].Microseconds())/n, "untrapped-µs")
	b.ReportMetric(float64(took[1].Microseconds())/n, "trapped-µs")
	b.ReportMetric(float64((took[1]-took[0]).Microseconds())/n, "extra-µs")
}

// BenchmarkTrapSyscall: a command that truncates one workspace file 1000
// times, with the trap (Changes doing nothing) and without, alternately;
// the difference over 1000 is what one trapped syscall costs.
func BenchmarkTrapSyscall(b *testing.B) {
	useSandbox(b)
	root := trapRoot(b)
	const line = `i=0; while [ $i -lt 1000 ]; do : > a; i=$((i+1)); done`
	var took [2]time.Duration
	for b.Loop() {
		for i, changes := range []ChangeHook{nil, changeFunc(func(string) {})} {
			start := time.Now()
			run := Run(context.Background(), Command{Root: root, Dir: root, Line: line, Timeout: time.Minute, Changes: changes})
			took[i] += time.Since(start)
			if run.Err != nil || run.ExitCode != 0 {
				b.Fatalf("%+v", run)
			}
		}
	}
	b.ReportMetric(float64((took[1]-took[0]).Nanoseconds())/float64(b.N)/1000/1000, "µs/trapped-syscall")
}

// changeFunc is a ChangeHook that calls itself on each change.
type changeFunc func(string)

func (changeFunc) Trapped()          {}
func (f changeFunc) Change(p string) { f(p) }

// TestTrapSaysUntouched: a trapped command that made no syscall able to
// change a file is said to have left the files untouched (its caller may
// skip looking for what it changed); any such syscall, in the workspace or
// not, denies it, whatever path it names.
func TestTrapSaysUntouched(t *testing.T) {
	useSandbox(t)
	root := trapRoot(t)
	_, _, run := trapRun(t, root, `cat a`)
	if !run.Trapped {
		t.Skip("the sandbox has no cells here") // cells need user namespaces
	}
	if !run.Untouched || run.ExitCode != 0 {
		t.Errorf("cat: untouched %v, exit %d: %s", run.Untouched, run.ExitCode, run.Output)
	}
	for _, line := range []string{`touch c`, `echo x > /tmp/x`, `cat a > /dev/null`, `mkdir -p /tmp/d`, `sh -c 'sleep 0.01; touch sub/late' & wait`} {
		if _, _, run := trapRun(t, root, line); run.Untouched || !run.Trapped {
			t.Errorf("%s: untouched %v, trapped %v", line, run.Untouched, run.Trapped)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "sub", "late")); err != nil {
		t.Error(err)
	}
}
