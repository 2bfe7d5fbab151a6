package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"
)

var (
	loadEditors    = flag.Int("load-editors", 4, "editors of TestLoadCampaign (the long run: 20)")
	loadSessions   = flag.Int("load-sessions", 2, "sessions each editor opens in each workspace (the long run: 5)")
	loadWorkspaces = flag.Int("load-workspaces", 2, "workspaces of TestLoadCampaign (the long run: 10)")
	loadPrompts    = flag.Int("load-prompts", 3, "prompts sent in each session of TestLoadCampaign")
)

// TestLoadCampaign runs N editors, each on its own connection with M
// sessions in each of K workspaces (N×M×K sessions), against one real
// `hearth serve`; every session sends its prompts one after another, all
// sessions at once. It measures prompt → first session/update and prompt →
// answer, and fails on any error. Short: 4 × 2 × 2; the long run is
// -load-editors=20 -load-sessions=5 -load-workspaces=10 (docs/RELIABILITY.md).
func TestLoadCampaign(t *testing.T) {
	e := newE2E(t)
	e.serve()
	roots := make([]string, *loadWorkspaces)
	for i := range roots {
		roots[i] = filepath.Join(filepath.Dir(e.root), fmt.Sprintf("load%d", i))
		mkWorkspace(t, roots[i])
	}
	editors := make([]*campaignEditor, *loadEditors)
	for i := range editors {
		editors[i] = dialEditor(t, e.sock)
	}
	var (
		mu            sync.Mutex
		first, answer []time.Duration
		later         []time.Duration // first update of prompts after a session's first (no warm-up to wait for)
		errs          []string
		wg            sync.WaitGroup
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, fmt.Sprintf(format, args...))
	}
	start := time.Now()
	for ei, ed := range editors {
		for _, root := range roots {
			for si := range *loadSessions {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
					defer cancel()
					id, err := ed.newSession(ctx, root, "")
					if err != nil {
						fail("editor %d: %v", ei, err)
						return
					}
					for p := range *loadPrompts {
						text := fmt.Sprintf("hi from editor %d session %d (%d)", ei, si, p)
						if p%2 == 1 {
							text = "please read hello.txt"
						}
						sent := time.Now()
						stop, f, err := ed.prompt(ctx, id, text)
						took := time.Since(sent)
						if err != nil || stop != acp.StopReasonEndTurn {
							fail("editor %d session %s prompt %d: %s %v", ei, id, p, stop, err)
							continue
						}
						if f == 0 {
							fail("editor %d session %s prompt %d: answered without any session/update", ei, id, p)
							continue
						}
						mu.Lock()
						first = append(first, f)
						answer = append(answer, took)
						if p > 0 {
							later = append(later, f)
						}
						mu.Unlock()
					}
				}()
			}
		}
	}
	wg.Wait()
	wall := time.Since(start)
	for _, err := range errs {
		t.Error(err)
	}
	sessions := *loadEditors * *loadSessions * *loadWorkspaces
	if len(first) == 0 {
		t.Fatal("no prompt was answered")
	}
	pct := func(d []time.Duration, p float64) time.Duration {
		if len(d) == 0 {
			return 0
		}
		slices.Sort(d)
		return d[min(len(d)-1, int(float64(len(d))*p))].Round(10 * time.Microsecond)
	}
	t.Logf("%d editors × %d sessions × %d workspaces = %d sessions, %d prompts in %v (%d errors); "+
		"prompt → first update p50 %v p99 %v max %v (after a session's first prompt: p50 %v p99 %v); "+
		"prompt → answer p50 %v p99 %v; model API WebSocket handshakes %d",
		*loadEditors, *loadSessions, *loadWorkspaces, sessions, len(first)+len(errs), wall.Round(time.Millisecond), len(errs),
		pct(first, 0.5), pct(first, 0.99), pct(first, 1), pct(later, 0.5), pct(later, 0.99),
		pct(answer, 0.5), pct(answer, 0.99), e.sim.Handshakes())
}
