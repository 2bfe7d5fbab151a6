package bench

import (
	"fmt"
	"io"
	"math"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/hearthd/hearth/session/sim"
)

// turnSample is what one timed turn measured. Everything but the two
// times comes from the simulator's records of the turn's requests.
type turnSample struct {
	turn       time.Duration // from the prompt to the end of the turn
	firstToken time.Duration // from the prompt to the first streamed output the client surfaced
	floor      time.Duration // floorOf of the turn's responses
	server     time.Duration // the simulator's measured time on the turn's requests (arrival to answer, summed) and its handshakes
	late       time.Duration // of server, what the cost model did not charge: the simulator's timer and scheduling lateness
	requests   requestCounts
	handshakes int   // WebSocket upgrades during the turn
	jsonBytes  int64 // the requests' JSON (frames or bodies)
	wireBytes  int64 // what the server read from its sockets during the turn
}

// requestCounts counts a turn's requests by kind.
type requestCounts struct {
	Full        int `json:"full"`        // no previous_response_id: the whole input
	Incremental int `json:"incremental"` // previous_response_id and the new items only
	Warmup      int `json:"warmup"`      // generate:false
}

// timeStat is one time over the repeats, in milliseconds.
type timeStat struct {
	Median float64   `json:"median_ms"`
	P90    float64   `json:"p90_ms"`
	All    []float64 `json:"all_ms"`
}

// modeResult is one mode's row: hearth bench's table and --json.
type modeResult struct {
	Key        string   `json:"key"`
	Name       string   `json:"name"`
	Client     string   `json:"client"` // "hearth", or "bench" for the bench's own minimal client
	Turn       timeStat `json:"turn"`
	FirstToken timeStat `json:"first_token"`
	FloorMS    float64  `json:"floor_ms"`
	Overhead   float64  `json:"overhead"` // median turn / floor
	// ServerMS is the simulator's time on the median turn: its measured time
	// on the requests plus the handshakes' cost. LateMS is the part of it the
	// cost model did not charge (timer and scheduling lateness on this
	// machine, not the client's); OverheadExact the median turn without it,
	// over the floor: the overhead on a server that keeps to its cost model.
	// ClientMS is the rest of the turn: the client's own time and the loopback.
	ServerMS      float64       `json:"server_ms"`
	LateMS        float64       `json:"late_ms"`
	OverheadExact float64       `json:"overhead_exact"`
	ClientMS      float64       `json:"client_ms"`
	Requests      requestCounts `json:"requests"` // of the median turn
	Handshakes    int           `json:"handshakes"`
	JSONBytes     int64         `json:"json_bytes"`
	WireBytes     int64         `json:"wire_bytes"`
}

// report is everything hearth bench --json prints.
type report struct {
	Steps       int            `json:"steps"`
	Runs        int            `json:"runs"`
	FileKB      int            `json:"file_kb"`
	Cost        map[string]any `json:"cost"`
	FloorMethod string         `json:"floor_method"`
	Modes       []modeResult   `json:"modes"`
	Plot        *sweep         `json:"plot,omitempty"`
}

func costJSON(c sim.Cost) map[string]any {
	return map[string]any{"handshake_ms": ms(c.Handshake), "per_request_ms": ms(c.PerRequest),
		"per_input_kb_ms": ms(c.PerInputKB), "first_token_ms": ms(c.FirstToken), "tokens_per_second": c.TokensPerSecond}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// stat is the median and the p90 (nearest rank: with 3 repeats, the slowest).
func stat(ds []time.Duration) timeStat {
	sorted := append([]time.Duration(nil), ds...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	s := timeStat{All: make([]float64, len(ds))}
	for i, d := range ds {
		s.All[i] = ms(d)
	}
	if len(sorted) == 0 {
		return s
	}
	s.Median = ms(median(sorted))
	s.P90 = ms(sorted[int(math.Ceil(0.9*float64(len(sorted))))-1])
	return s
}

// median of sorted durations; the mean of the middle two for an even count.
func median(sorted []time.Duration) time.Duration {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// summarize folds a mode's samples into its row. Counts and bytes are the
// median turn's (they do not vary between repeats unless something retried).
func summarize(m Mode, samples []turnSample) modeResult {
	turns := make([]time.Duration, len(samples))
	firsts := make([]time.Duration, len(samples))
	for i, s := range samples {
		turns[i], firsts[i] = s.turn, s.firstToken
	}
	r := modeResult{Key: m.key, Name: m.name, Client: "hearth", Turn: stat(turns), FirstToken: stat(firsts)}
	if m.ownClient {
		r.Client = "bench"
	}
	mid := samples[0]
	for _, s := range samples {
		if math.Abs(ms(s.turn)-r.Turn.Median) < math.Abs(ms(mid.turn)-r.Turn.Median) {
			mid = s
		}
	}
	r.FloorMS, r.ServerMS, r.LateMS, r.ClientMS = ms(mid.floor), ms(mid.server), ms(mid.late), ms(mid.turn-mid.server)
	if mid.floor > 0 {
		r.Overhead = r.Turn.Median / r.FloorMS
		r.OverheadExact = ms(mid.turn-mid.late) / r.FloorMS
	}
	r.Requests, r.Handshakes, r.JSONBytes, r.WireBytes = mid.requests, mid.handshakes, mid.jsonBytes, mid.wireBytes
	return r
}

// printTable prints the table, the floor's definition and the notes.
func printTable(w io.Writer, rep report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tmedian\tp90\tfirst token\tfloor\t×floor\tsim late\t×floor exact\tclient\tfull/incr/warm-up\thandshakes\tJSON bytes\ton the wire\t")
	for _, r := range rep.Modes {
		name := r.Name
		if r.Client != "hearth" {
			name += " *"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.4f×\t%s\t%.4f×\t%s\t%d/%d/%d\t%d\t%d\t%d\t\n", name,
			fmtMS(r.Turn.Median), fmtMS(r.Turn.P90), fmtMS(r.FirstToken.Median), fmtMS(r.FloorMS), r.Overhead,
			fmtMS(r.LateMS), r.OverheadExact, fmtMS(r.ClientMS),
			r.Requests.Full, r.Requests.Incremental, r.Requests.Warmup, r.Handshakes, r.JSONBytes, r.WireBytes)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nfloor: %s\n", floorMethod)
	fmt.Fprintln(w, "×floor: the median turn over the floor. first token: prompt → the first reasoning summary, text or tool call the client surfaced.")
	fmt.Fprintln(w, "sim late: the simulator's measured time on the turn's requests (arrival to answer) beyond what its cost model charged them:")
	fmt.Fprintln(w, "  timer and scheduling lateness of this machine, not the client's; ×floor exact: (median − sim late) / floor.")
	fmt.Fprintln(w, "client: the turn minus the simulator's time (its requests, measured, and its handshakes): the client's own time and the loopback.")
	fmt.Fprintln(w, "JSON bytes: the requests' frames or bodies; on the wire: what the simulator read from its sockets during the turn (permessage-deflate, HTTP headers and framing included).")
	fmt.Fprintln(w, "Requests, handshakes and bytes are the turn's (a warm-up or re-warm before the prompt is not in them).")
	fmt.Fprintln(w, "* the bench's own minimal HTTP client (no SQLite, no editor): hearth itself never sends store:true.")
	if rep.Plot != nil {
		fmt.Fprintf(w, "\nplot: %s (end-to-end time against tool calls %v, median of %d per point, and the floor)\n", rep.Plot.File, rep.Plot.Steps, rep.Plot.Runs)
	}
	return nil
}

func fmtMS(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.3fs", v/1000)
	}
	return fmt.Sprintf("%.1fms", v)
}
