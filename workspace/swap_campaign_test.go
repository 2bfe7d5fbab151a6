//go:build linux

package workspace

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"
)

// campaignScale multiplies the size of TestSymlinkSwapCampaign. The default
// (1) runs 300 read_file, 300 write_file/edit_file, 60 list_dir and 60 grep
// calls in a few seconds; a long campaign:
//
//	go test ./workspace -run SymlinkSwapCampaign -campaign=20 -v
var campaignScale = flag.Int("campaign", 1, "size multiplier of TestSymlinkSwapCampaign (1 = 300 reads + 300 writes)")

// outsideMarker is in every name and content outside the workspace in the
// campaign: seeing it in a tool's output means confinement failed.
const outsideMarker = "OUTSIDE-7f3a9c"

// campaignStats is what one swap campaign did.
type campaignStats struct {
	reads, writes, lists, greps atomic.Int64 // calls made
	refused                     atomic.Int64 // calls that failed (refused, not found, changed while written)
	leaks                       atomic.Int64 // outputs holding the outside marker
	insideReads                 atomic.Int64 // read_file calls that returned the inside file
	swaps                       atomic.Int64 // RENAME_EXCHANGEs done
}

// TestSymlinkSwapCampaign is issue 11's attack: while a goroutine swaps
// ws/sub, a real directory, with a symlink to ../outside using
// renameat2(RENAME_EXCHANGE) in a tight loop, the real tools read, write,
// edit, list and grep sub/... by the hundred. No output may ever show what is
// outside, nothing outside may ever be created or changed (an inotify watch
// on outside/ sees every attempt, even one undone later), and no temporary
// file may be left anywhere. Calls may fail; they may not leak.
func TestSymlinkSwapCampaign(t *testing.T) {
	scale := max(*campaignScale, 1)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	outsideFiles := map[string]string{
		"target.txt":           "alpha " + outsideMarker + "\n",
		outsideMarker + ".txt": outsideMarker + "\n",
	}
	for name, content := range outsideFiles {
		writeFile(t, filepath.Join(outside, name), content)
	}
	writeFile(t, filepath.Join(ws, "sub", "target.txt"), "alpha inside\n")
	symlink(t, "../outside", filepath.Join(ws, "swap")) // relative to ws/, as sub would be
	sub, swap := filepath.Join(ws, "sub"), filepath.Join(ws, "swap")
	if err := unix.Renameat2(unix.AT_FDCWD, sub, unix.AT_FDCWD, swap, unix.RENAME_EXCHANGE); err != nil {
		if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) {
			t.Skipf("renameat2(RENAME_EXCHANGE) is not supported here: %v", err)
		}
		t.Fatal(err)
	}
	restoreSub(t, sub, swap)

	// Every event on outside/ is an attempt to change it: the swapper
	// renames entries of ws/ only.
	events := watchOutside(t, outside)

	r, err := Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	ts := NewToolset(r)

	var st campaignStats
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(scale)*time.Minute)
	defer cancel()
	swapperDone := make(chan error, 1)
	stopSwapping := make(chan struct{})
	// insideRead is signalled by every read_file that returned the inside
	// file. Every pauseEvery swaps (an even number: sub is the directory
	// then) the swapper waits for one, so the campaign proves the tools
	// still work between attacks however the scheduler interleaves the
	// swaps with the calls: left free-running on a loaded machine, the
	// swapper can sit on the symlink for a whole campaign (CI saw 0 of 300).
	insideRead := make(chan struct{}, 1)
	const pauseEvery = 256
	go func() {
		maxSwaps := int64(scale) * 5_000_000
		for n := st.swaps.Load(); n < maxSwaps; n = st.swaps.Load() {
			select {
			case <-stopSwapping:
				swapperDone <- nil
				return
			case <-ctx.Done():
				swapperDone <- nil
				return
			default:
			}
			if n > 0 && n%pauseEvery == 0 {
				select {
				case <-insideRead: // one that raced the swaps counts too
				case <-stopSwapping:
					swapperDone <- nil
					return
				case <-ctx.Done():
					swapperDone <- nil
					return
				case <-time.After(10 * time.Second):
					swapperDone <- errors.New("sub stayed the directory for 10s and no read_file returned the inside file: the tools refuse a path nobody touches")
					return
				}
			}
			if err := unix.Renameat2(unix.AT_FDCWD, sub, unix.AT_FDCWD, swap, unix.RENAME_EXCHANGE); err != nil {
				swapperDone <- err
				return
			}
			st.swaps.Add(1)
		}
		swapperDone <- nil
	}()

	check := func(kind string, res Result) {
		text := res.Output
		if res.Diff != nil {
			text += res.Diff.Old + res.Diff.New + res.Diff.Unified
		}
		if strings.Contains(text, outsideMarker) {
			if st.leaks.Add(1) <= 3 {
				t.Errorf("%s leaked the outside: %q", kind, res.Output)
			}
		}
		if res.IsError {
			st.refused.Add(1)
		}
	}
	// The calls, spread over workers so they overlap each other and the swaps.
	type job func(i int)
	jobs := []struct {
		n   int
		run job
	}{
		{300 * scale, func(i int) {
			res := call(t, ts, "read_file", `{"path":"sub/target.txt"}`)
			check("read_file", res)
			if !res.IsError && strings.Contains(res.Output, "inside") {
				st.insideReads.Add(1)
				select {
				case insideRead <- struct{}{}:
				default:
				}
			}
			st.reads.Add(1)
		}},
		{150 * scale, func(i int) {
			content := fmt.Sprintf("alpha inside %d\n", i)
			check("write_file", call(t, ts, "write_file", mustJSON(t, map[string]string{"path": "sub/target.txt", "content": content})))
			if i%10 == 0 { // a new file, and a new directory
				check("write_file", call(t, ts, "write_file", mustJSON(t, map[string]string{"path": fmt.Sprintf("sub/new%d/created.txt", i%3), "content": "new\n"})))
			}
			st.writes.Add(1)
		}},
		{150 * scale, func(i int) {
			check("edit_file", call(t, ts, "edit_file", `{"path":"sub/target.txt","old_string":"alpha ","new_string":"alpha  "}`))
			st.writes.Add(1)
		}},
		{60 * scale, func(i int) {
			check("list_dir", call(t, ts, "list_dir", `{"path":"sub"}`))
			st.lists.Add(1)
		}},
		{60 * scale, func(i int) {
			check("grep", call(t, ts, "grep", `{"pattern":"alpha|`+outsideMarker[:len(outsideMarker)-1]+`[c]","path":"sub"}`))
			check("grep", call(t, ts, "grep", `{"pattern":"alpha|`+outsideMarker[:len(outsideMarker)-1]+`[c]","path":"sub/target.txt"}`))
			st.greps.Add(1)
		}},
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, j := range jobs {
		for w := range 2 {
			wg.Go(func() {
				for i := w; i < j.n && ctx.Err() == nil; i += 2 {
					j.run(i)
				}
			})
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stopSwapping)
	if err := <-swapperDone; err != nil {
		t.Fatalf("swapper: %v", err)
	}
	if ctx.Err() != nil {
		t.Errorf("the campaign did not finish within %v", time.Duration(scale)*time.Minute)
	}
	restoreSub(t, sub, swap)

	// What happened outside, seen by inotify up to a fence file of our own.
	outsideEvents := events.drainUntilFence(t)
	var changed []string
	for name, content := range outsideFiles {
		b, err := os.ReadFile(filepath.Join(outside, name))
		if err != nil || string(b) != content {
			changed = append(changed, fmt.Sprintf("%s (%q, %v)", name, b, err))
		}
	}
	entries, _ := os.ReadDir(outside)
	var extra []string
	for _, e := range entries {
		if _, ok := outsideFiles[e.Name()]; !ok {
			extra = append(extra, e.Name())
		}
	}
	var temps []string
	filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), tempPrefix) {
			temps = append(temps, p)
		}
		return nil
	})

	t.Logf("campaign ×%d in %v: %d swaps; %d read_file, %d write_file+edit_file rounds, %d list_dir, %d grep rounds; %d reads got the inside file; %d calls refused",
		scale, elapsed.Round(time.Millisecond), st.swaps.Load(), st.reads.Load(), st.writes.Load(), st.lists.Load(), st.greps.Load(), st.insideReads.Load(), st.refused.Load())
	t.Logf("leaks: %d outputs showed the outside; %d events on outside/; %d files outside changed, %d created; %d temporary files left",
		st.leaks.Load(), len(outsideEvents), len(changed), len(extra), len(temps))
	if st.swaps.Load() == 0 {
		t.Error("the swapper never swapped: the campaign tested nothing")
	}
	if st.insideReads.Load() == 0 {
		t.Error("no read_file returned the inside file: the tools refused everything, which proves nothing")
	}
	if n := st.leaks.Load(); n > 0 {
		t.Errorf("%d tool outputs showed content or names from outside the workspace", n)
	}
	if len(outsideEvents) > 0 {
		t.Errorf("%d filesystem events on outside/, e.g. %v", len(outsideEvents), outsideEvents[:min(len(outsideEvents), 5)])
	}
	if len(changed) > 0 || len(extra) > 0 {
		t.Errorf("outside/ changed: modified %v, created %v", changed, extra)
	}
	if len(temps) > 0 {
		t.Errorf("temporary files left: %v", temps[:min(len(temps), 5)])
	}
	// The tools did work between the swaps: the inside file is still one.
	if b, err := os.ReadFile(filepath.Join(sub, "target.txt")); err != nil || !strings.HasPrefix(string(b), "alpha") {
		t.Errorf("sub/target.txt after the campaign: %q, %v", b, err)
	}
}

// restoreSub leaves ws/sub the real directory and ws/swap the symlink,
// whichever way the last swap left them.
func restoreSub(t *testing.T, sub, swap string) {
	t.Helper()
	fi, err := os.Lstat(sub)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		if err := unix.Renameat2(unix.AT_FDCWD, sub, unix.AT_FDCWD, swap, unix.RENAME_EXCHANGE); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Lstat(sub); err != nil || !fi.IsDir() {
		t.Fatalf("ws/sub is not the directory after restoring: %v, %v", fi, err)
	}
}

// outsideWatch records every fsnotify event on one directory.
type outsideWatch struct {
	w     *fsnotify.Watcher
	dir   string
	fence string
}

func watchOutside(t *testing.T, dir string) *outsideWatch {
	t.Helper()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if err := w.Add(dir); err != nil {
		t.Fatal(err)
	}
	return &outsideWatch{w: w, dir: dir, fence: filepath.Join(dir, "fence-"+outsideMarker)}
}

// drainUntilFence creates a fence file in the directory and returns every
// event before the fence's own: inotify's queue is ordered, so those are
// all the events of everything done before. The fence is removed again.
func (o *outsideWatch) drainUntilFence(t *testing.T) []fsnotify.Event {
	t.Helper()
	if err := os.WriteFile(o.fence, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(o.fence)
	var got []fsnotify.Event
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev := <-o.w.Events:
			if ev.Name == o.fence {
				return got
			}
			got = append(got, ev)
		case err := <-o.w.Errors:
			t.Fatalf("watching outside/: %v", err)
		case <-timeout:
			t.Fatal("the fence file's event never came")
		}
	}
}
