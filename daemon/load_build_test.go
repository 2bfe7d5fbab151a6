package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
)

// buildSession makes a session of at least n items the way an editor
// makes one: prompts on the daemon's socket, the simulator's model calling
// the workspace's tools, every result stored by the daemon with the view the
// editor was shown. Each prompt is a turn of up to 50 calls (a reasoning
// item, the call and its output each), cycling through a read of a 3 KiB
// file, a grep, a listing and an edit that shows a diff. It returns the
// session's id and its number of items.
func buildSession(tb testing.TB, td *testDaemon, n int) (acp.SessionId, int) {
	tb.Helper()
	var src strings.Builder
	for i := 0; src.Len() < 3<<10; i++ {
		fmt.Fprintf(&src, "func step%d(x int) int { return x*%d + 1 } // keeps the loop honest\n", i, i)
	}
	if err := os.WriteFile(filepath.Join(td.root, "src", "loop.go"), []byte(src.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	e := td.dialRaw(tb)
	var r acp.NewSessionResponse
	e.mustCall(rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: td.root, McpServers: []acp.McpServer{}}, &r)
	e.mustCall(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: r.SessionId, ModeId: ModeFullAuto}, nil)
	prompts := []string{
		`look sim:calls=50 sim:tool=read_file sim:args={"path":"src/loop.go"}`,
		`find sim:calls=20 sim:tool=grep sim:args={"pattern":"step1","path":"src"}`,
		`list sim:calls=10 sim:tool=list_dir sim:args={"path":"src"}`,
		`edit sim:calls=1 sim:tool=edit_file sim:args={"path":"src/loop.go","old_string":"step0(x\u0020int)","new_string":"step0(y\u0020int)"}`,
		`edit sim:calls=1 sim:tool=edit_file sim:args={"path":"src/loop.go","old_string":"step0(y\u0020int)","new_string":"step0(x\u0020int)"}`,
	}
	ctx := context.Background()
	items := 0
	for i := 0; items < n; i++ {
		var pr acp.PromptResponse
		e.mustCall(rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: r.SessionId,
			Prompt: []acp.ContentBlock{acp.TextBlock(prompts[i%len(prompts)])}}, &pr)
		if pr.StopReason != acp.StopReasonEndTurn {
			tb.Fatalf("prompt %d: stop %q", i, pr.StopReason)
		}
		page, err := td.d.db.Items().Page(ctx, string(r.SessionId), int64(items), -1)
		if err != nil {
			tb.Fatal(err)
		}
		items += len(page)
	}
	return r.SessionId, items
}
