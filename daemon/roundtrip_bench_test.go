package daemon

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/session/sim"
)

// BenchmarkRoundTrip measures hearth's time per model round trip through
// the whole daemon, as the server sees it: from the moment the terminal
// event of one response was written to the arrival of the next request,
// over a 30-step tool loop driven by an editor on the socket. It covers
// reading the response, running the tool (read_file on a 2 KiB file, with
// the read set recorded), the editor's updates, committing the response and
// the output with the next request's row, and building and sending that
// request. calls=N per response: with N > 1, the calls of one response
// (read-only) run side by side. client=minimal is the same loop run by a
// client that does nothing but read the events and send the next request
// (minimalClient), on the same machine in the same run: the time hearth
// takes above it is hearth's own.
func BenchmarkRoundTrip(b *testing.B) {
	for _, calls := range []int{1, 3} {
		b.Run(fmt.Sprintf("calls=%d", calls), func(b *testing.B) {
			td, ed, id := roundTripSession()
			defer td.d.Close()
			var gaps []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				before := len(td.sim.Received())
				ed.prompt(id, fmt.Sprintf(`go %d sim:calls=30 sim:parallel=%d sim:tool=read_file sim:args={"path":"big.txt"}`, i, calls))
				recs := td.sim.Received()[before:]
				if want := (30+calls-1)/calls + 1; len(recs) != want {
					b.Fatalf("%d requests, want %d", len(recs), want)
				}
				for j := 1; j < len(recs); j++ {
					gaps = append(gaps, recs[j].At.Sub(recs[j-1].AnsweredAt))
				}
				ed.forget()
			}
			b.StopTimer()
			reportGaps(b, gaps)
		})
		b.Run(fmt.Sprintf("calls=%d/client=minimal", calls), func(b *testing.B) {
			tmpl, out := hearthFrame(b, calls)
			srv := sim.New(sim.Options{})
			base, err := srv.Start()
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			m := dialMinimal(b, base, tmpl, out)
			defer m.conn.Close()
			var gaps []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				before := len(srv.Received())
				m.turn(b, fmt.Sprintf(`go %d sim:calls=30 sim:parallel=%d sim:tool=read_file sim:args={"path":"big.txt"}`, i, calls))
				recs := srv.Received()[before:]
				for j := 1; j < len(recs); j++ {
					gaps = append(gaps, recs[j].At.Sub(recs[j-1].AnsweredAt))
				}
			}
			b.StopTimer()
			reportGaps(b, gaps)
		})
	}
}

// roundTripSession starts a daemon whose workspace holds the 2 KiB file the
// round trips read, and an editor with a warmed session on it. The caller
// closes the daemon.
func roundTripSession() (*testDaemon, *editor, acp.SessionId) {
	td := startDaemon(&testing.T{}, sim.Options{}, "")
	os.WriteFile(filepath.Join(td.root, "big.txt"), []byte(strings.Repeat("0123456789abcdef\n", 120)), 0o644)
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	td.waitRequests(1) // the warm-up
	return td, ed, id
}

func reportGaps(b *testing.B, gaps []time.Duration) {
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	b.ReportMetric(float64(gaps[len(gaps)/2].Microseconds()), "µs-own-p50")
	b.ReportMetric(float64(gaps[len(gaps)*9/10].Microseconds()), "µs-own-p90")
}

// A read round trip commits once: the response that called the reads, with
// its request's end, the reads' outputs, what the model saw of the files and
// the next request's row. Reads of one response run side by side.
func TestRoundTripCommits(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	// A first turn: it waits for the warm-up (whose end is committed
	// in the background) and sets the session's title.
	ed.prompt(id, "hello")
	for _, parallel := range []int{1, 4} {
		before, reqs := td.d.db.Commits(), len(td.sim.Received())
		ed.prompt(id, fmt.Sprintf(`go sim:calls=12 sim:parallel=%d sim:tool=read_file sim:args={"path":"a.txt"}`, parallel))
		requests := len(td.sim.Received()) - reqs
		if want := 12/parallel + 1; requests != want {
			t.Fatalf("parallel=%d: %d requests, want %d", parallel, requests, want)
		}
		// One per request (its row, with what it carries), plus the turn's
		// own: its beginning, the user's message, the answer and its end.
		commits := td.d.db.Commits() - before
		if commits > int64(requests+4) {
			t.Errorf("parallel=%d: %d commits for %d requests; want at most 1 each, plus 4 for the turn", parallel, commits, requests)
		}
		t.Logf("parallel=%d: %d commits, %d requests", parallel, commits, requests)
	}
	seen, err := td.d.db.Memory().SeenFiles(context.Background(), string(id))
	if err != nil || seen["a.txt"].Hash == "" {
		t.Errorf("the read set does not hold a.txt: %v %v", seen, err)
	}
}

// A command that may change something (`touch` outside the workspace: no
// checkpoint row) commits twice a round trip: the response that called it, before
// the command may change anything (a daemon killed while it runs still
// knows it ran), and the output with the next request's row, as a read's.
// Calls of one response that may change something commit what came before
// each of them first.
func TestShellRoundTripCommits(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.must("session/set_mode", map[string]any{"sessionId": id, "modeId": ModeFullAuto}, nil) // commands run without asking
	ed.prompt(id, "hello")
	for _, parallel := range []int{1, 3} {
		before, reqs := td.d.db.Commits(), len(td.sim.Received())
		ed.prompt(id, fmt.Sprintf(`go sim:calls=6 sim:parallel=%d sim:tool=shell sim:args={"command":"touch\u0020/tmp/rt;cat\u0020a.txt"}`, parallel))
		requests := len(td.sim.Received()) - reqs
		if want := 6/parallel + 1; requests != want {
			t.Fatalf("parallel=%d: %d requests, want %d", parallel, requests, want)
		}
		// Each request's row with the outputs it carries, each response
		// that called commands, each command after the first of a response
		// (what came before it), plus the turn's own four.
		responses, later := requests-1, 6-(requests-1)
		commits := td.d.db.Commits() - before
		if want := int64(requests + responses + later + 4); commits > want {
			t.Errorf("parallel=%d: %d commits for %d requests; want at most %d", parallel, commits, requests, want)
		}
		t.Logf("parallel=%d: %d commits, %d requests", parallel, commits, requests)
	}
	if out := lastToolOutput(t, td); !strings.Contains(out, "alpha") {
		t.Errorf("the last command's output: %q", out)
	}
}

// A command that only reads (cmdsafe's list: `cat a.txt`) is a read: the
// calls of one response run side by side, starting before the response
// ends, and a round trip commits once, in every mode that runs it without
// asking.
func TestReadOnlyCommandRoundTripCommits(t *testing.T) {
	for _, mode := range []string{ModeFullAuto, ModeAsk} {
		t.Run(mode, func(t *testing.T) {
			td := startDaemon(t, sim.Options{}, "")
			ed := td.connect()
			ed.initialize()
			id := ed.newSession(td.root)
			ed.must("session/set_mode", map[string]any{"sessionId": id, "modeId": mode}, nil)
			ed.prompt(id, "hello")
			before, reqs := td.d.db.Commits(), len(td.sim.Received())
			ed.prompt(id, `go sim:calls=6 sim:parallel=2 sim:tool=shell sim:args={"command":"cat\u0020a.txt"}`)
			requests := len(td.sim.Received()) - reqs
			if requests != 4 {
				t.Fatalf("%d requests, want 4", requests)
			}
			if commits := td.d.db.Commits() - before; commits > int64(requests+4) {
				t.Errorf("%d commits for %d requests; want at most 1 each, plus 4 for the turn", commits, requests)
			}
			if out := lastToolOutput(t, td); !strings.Contains(out, "alpha") {
				t.Errorf("the last command's output: %q", out)
			}
		})
	}
}

// A request of a read round trip reaches the model API after its row, and
// what it carries, are in SQLite (store.Requests.InsertAfter, one
// transaction before the send). Seen from a connection of the test's own at
// each arrival: the rows of the requests before it and its own.
func TestRoundTripCommitBeforeSend(t *testing.T) {
	var (
		mu      sync.Mutex
		raw     *sql.DB // the test's own connection, set once the first turn is over
		session string
		rows    []int // requests rows of the session at each arrival
		errs    []error
	)
	onReceived := func(sim.Received) {
		mu.Lock()
		defer mu.Unlock()
		if raw == nil {
			return
		}
		var n int
		if err := raw.QueryRow(`SELECT count(*) FROM requests WHERE session_id = ?`, session).Scan(&n); err != nil {
			errs = append(errs, err)
		}
		rows = append(rows, n)
	}
	td := startDaemon(t, sim.Options{OnReceived: onReceived}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.prompt(id, "hello") // the first turn, after the warm-up
	before, err := td.d.db.Requests().List(context.Background(), string(id))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+td.d.db.Path()+"?_query_only=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mu.Lock()
	raw, session = db, string(id)
	mu.Unlock()
	ed.prompt(id, `go sim:calls=6 sim:tool=read_file sim:args={"path":"a.txt"}`)
	mu.Lock()
	defer mu.Unlock()
	raw = nil
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	if len(rows) != 7 {
		t.Fatalf("%d requests, want 7", len(rows))
	}
	for k := range 7 {
		if want := len(before) + k + 1; rows[k] != want {
			t.Errorf("request %d of the turn arrived with %d request rows in SQLite, want %d (its own too): %v", k+1, rows[k], want, rows)
		}
	}
}
