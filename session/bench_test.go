package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/session/sim"
)

// loopPrompt makes the simulator call read_file on a 2 KiB file 30 times,
// one call per response, then answer: 31 model round trips.
const loopPrompt = `go sim:calls=30 sim:tool=read_file sim:args={"path":"big.txt"}`

// BenchmarkToolLoop30 runs the 30-step tool loop with incremental requests
// and with every request in full, side by side in one run, against the
// in-process simulator at zero latency. It reports bytes sent (per request
// and per turn) and the daemon's own time per round trip: from a response's
// terminal event to the next request on the wire (commit, tool, build),
// median and p99.
func BenchmarkToolLoop30(b *testing.B) {
	for _, mode := range []struct {
		name        string
		full, plain bool
		deflate     sim.DeflateMode
	}{{"incremental", false, false, sim.DeflateTakeover}, {"incremental-no-takeover", false, false, sim.DeflateNoTakeover},
		{"incremental-uncompressed", false, true, sim.DeflateTakeover}, {"full", true, false, sim.DeflateTakeover}} {
		b.Run(mode.name, func(b *testing.B) {
			var sent, reqs, wire int64
			var gaps []time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				e := newEnv(&testing.T{}, sim.Options{Deflate: mode.deflate}, session.Config{Config: responses.Config{Lanes: responses.LanesOn, DisableCompression: mode.plain}, DisableIncremental: mode.full})
				id := fmt.Sprintf("bench-%d", i)
				c := e.open(id)
				warm(e.t, c)
				b.StartTimer()
				if _, err := c.Prompt(context.Background(), []json.RawMessage{session.UserMessage(loopPrompt)}, nil); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				rows, err := e.db.Requests().List(context.Background(), id)
				if err != nil {
					b.Fatal(err)
				}
				rows = rows[1:] // the warm-up is not part of the turn
				if len(rows) != 31 {
					b.Fatalf("%d requests, want 31", len(rows))
				}
				for j, r := range rows {
					sent += r.BytesSent
					reqs++
					if j > 0 {
						gaps = append(gaps, r.Sent.Sub(rows[j-1].Finished))
					}
				}
				wire += e.client.Stats().WireSent // warm-up and handshake included
				c.Close()
				e.client.Close()
				e.db.Close()
				e.sim.Close()
				b.StartTimer()
			}
			sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
			b.ReportMetric(float64(sent)/float64(b.N), "bytes/turn")
			b.ReportMetric(float64(sent)/float64(reqs), "bytes/req")
			b.ReportMetric(float64(wire)/float64(b.N), "wire-bytes/turn")
			b.ReportMetric(float64(gaps[len(gaps)/2].Microseconds()), "µs-own-p50")
			b.ReportMetric(float64(gaps[len(gaps)*99/100].Microseconds()), "µs-own-p99")
		})
	}
}

// TestToolLoopBytesShape checks the benchmark's claim in one run: with
// incremental requests the bytes per request stay flat as the transcript
// grows (total linear in steps); in full they grow with it (total
// quadratic).
func TestToolLoopBytesShape(t *testing.T) {
	perReq := func(full bool) []int64 {
		e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}, DisableIncremental: full})
		c := e.open("s")
		warm(t, c)
		prompt(t, c, loopPrompt, nil)
		rows, err := e.db.Requests().List(context.Background(), "s")
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, r := range rows[1:] {
			out = append(out, r.BytesSent)
		}
		return out
	}
	inc, full := perReq(false), perReq(true)
	if len(inc) != 31 || len(full) != 31 {
		t.Fatalf("requests: %d incremental, %d full", len(inc), len(full))
	}
	// Incremental: the 30th request is about the size of the 2nd.
	if inc[30] > inc[1]*3/2 {
		t.Errorf("incremental request grew from %d to %d bytes", inc[1], inc[30])
	}
	// Full: every request is larger than the one before.
	for i := 1; i < len(full); i++ {
		if full[i] <= full[i-1] {
			t.Errorf("full request %d (%d bytes) is not larger than %d (%d)", i, full[i], i-1, full[i-1])
		}
	}
	var ti, tf int64
	for i := range inc {
		ti += inc[i]
		tf += full[i]
	}
	if tf < 3*ti {
		t.Errorf("total bytes: full %d vs incremental %d; want full ≥ 3× incremental over 30 steps", tf, ti)
	}
	t.Logf("bytes per turn: incremental %d, full %d (%.1f×)", ti, tf, float64(tf)/float64(ti))
}
