package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/session/sim"
)

// BenchmarkCompaction compacts one session — six turns, each reading a
// 14 KB file, about 22,000 tokens of view — as /compact does, with the
// local summary and with the API's compaction (HEARTH_COMPACTION=server),
// against the simulator with the reference cost model. Per compaction it
// reports the requests it took (the summary or compaction request, and the
// warm-up of the new view), the bytes they sent, the tokens the compacted
// view holds (the warm-up's input, which every later request starts from)
// and, as time/op, the compaction with its warm-up.
func BenchmarkCompaction(b *testing.B) {
	for _, mode := range []string{session.CompactLocal, session.CompactServer} {
		b.Run(mode, func(b *testing.B) {
			var reqs, sent, after, before int
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				e := newEnv(&testing.T{}, sim.Options{Cost: sim.ReferenceCost()}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}, Compaction: mode})
				var lines strings.Builder
				for n := range 300 {
					fmt.Fprintf(&lines, "line %3d of a file the model reads: %s\n", n, strings.Repeat("x", 12))
				}
				if err := os.WriteFile(filepath.Join(e.root, "part.txt"), []byte(lines.String()), 0o644); err != nil {
					b.Fatal(err)
				}
				id := fmt.Sprintf("compact-%d", i)
				c := e.open(id)
				warm(e.t, c)
				for turn := range 6 {
					if _, err := c.Prompt(context.Background(), []json.RawMessage{session.UserMessage(fmt.Sprintf(
						`turn %d sim:calls=1 sim:tool=read_file sim:args={"path":"part.txt"}`, turn))}, nil); err != nil {
						b.Fatal(err)
					}
				}
				from := len(e.sim.Received())
				before += e.sim.Received()[from-1].InputTokens
				b.StartTimer()
				if stop, err := c.Compact(context.Background(), nil); err != nil || stop != session.StopEndTurn {
					b.Fatalf("Compact: %s %v", stop, err)
				}
				b.StopTimer()
				recs := e.wait(len(e.sim.Received()))[from:]
				reqs += len(recs)
				for _, r := range recs {
					sent += r.Bytes
				}
				after += recs[len(recs)-1].InputTokens
				c.Close()
				e.client.Close()
				e.sim.Close()
				e.db.Close()
			}
			b.ReportMetric(float64(reqs)/float64(b.N), "requests/op")
			b.ReportMetric(float64(sent)/float64(b.N), "bytes-sent/op")
			b.ReportMetric(float64(before)/float64(b.N), "tokens-before")
			b.ReportMetric(float64(after)/float64(b.N), "tokens-after")
		})
	}
}
