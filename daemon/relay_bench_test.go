package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// BenchmarkRelay measures how fast the daemon relays a streamed answer to
// the editors attached to a session, over the real socket: the simulator
// streams unpaced (one delta per token, far faster than any model), and the
// figure is tokens per second delivered to every editor. Fast models stream
// ~1,000 tokens/s with bursts to 4,000.
func BenchmarkRelay(b *testing.B) {
	const tokens = 20000
	for _, editors := range []int{1, 3} {
		b.Run(fmt.Sprintf("editors=%d", editors), func(b *testing.B) {
			t := &testing.T{}
			td := startDaemon(t, sim.Options{}, "")
			defer td.d.Close()
			words := make([]atomic.Int64, editors)
			got := make(chan int, editors) // an editor has every word of the turn
			var clients []*rpc.Client
			var sid acp.SessionId
			for i := 0; i < editors; i++ {
				conn, err := net.Dial("unix", td.cfg.Socket)
				if err != nil {
					b.Fatal(err)
				}
				i := i
				c := rpc.NewClient(conn, rpc.ClientOptions{OnNotify: func(method string, params json.RawMessage) {
					var n acp.SessionNotification
					if json.Unmarshal(params, &n) == nil && n.Update.AgentMessageChunk != nil {
						if words[i].Add(int64(len(strings.Fields(n.Update.AgentMessageChunk.Content.Text.Text)))) == tokens {
							got <- i
						}
					}
				}})
				defer c.Close()
				ctx := context.Background()
				c.Call(ctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, nil)
				if i == 0 {
					var s acp.NewSessionResponse
					if err := c.Call(ctx, rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: td.root, McpServers: []acp.McpServer{}}, &s); err != nil {
						b.Fatal(err)
					}
					sid = s.SessionId
				} else if err := c.Call(ctx, rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: sid, Cwd: td.root, McpServers: []acp.McpServer{}}, nil); err != nil {
					b.Fatal(err)
				}
				clients = append(clients, c)
			}
			b.ResetTimer()
			start := time.Now()
			for n := 0; n < b.N; n++ {
				for i := range words {
					words[i].Store(0)
				}
				if err := clients[0].Call(context.Background(), rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: sid,
					Prompt: []acp.ContentBlock{acp.TextBlock(fmt.Sprintf("talk sim:tokens=%d", tokens))}}, nil); err != nil {
					b.Fatal(err)
				}
				// The prompting editor has everything when its answer comes
				// (flush); the others, once their outboxes drain.
				for range words {
					select {
					case <-got:
					case <-time.After(time.Minute):
						b.Fatalf("an editor did not get all %d words", tokens)
					}
				}
			}
			b.ReportMetric(float64(tokens*b.N)/time.Since(start).Seconds(), "tokens/s")
		})
	}
}
