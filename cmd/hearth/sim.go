package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hearthd/hearth/session/sim"
)

// simWords ends `hearth sim --help`: how to drive the scripted model, which
// also answers `hearth ask` and the editors when no API key is set.
const simWords = `
Without OPENAI_API_KEY, hearth ask and the editors answer from this simulator,
run inside the daemon: try hearth ask "write notes/x.txt hi", then "run ls".
` + sim.WordsHelp

// runSim serves the built-in Responses simulator, for trying clients (and
// hearth itself) against a server whose behaviour and costs are known.
func runSim(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sim", stderr)
	addr := fs.String("addr", "127.0.0.1:8089", "listen address (port 0 picks a free one)")
	key := fs.String("api-key", os.Getenv("HEARTH_SIM_API_KEY"), "require this bearer token (default: accept any)")
	noLanes := fs.Bool("no-lanes", false, "reject stream_id (invalid_stream_id) and run one response at a time per connection")
	lanes := fs.String("lanes", "on", "what stream_id does: on (parallel lanes), ignore (never echoed, one response at a time), refuse (unknown_parameter)")
	reasoning := fs.String("reasoning", "auto", "which models reason: auto (all but gpt-4*, gpt-3.5*, chatgpt-4*), always, never")
	ping := fs.Duration("ping", 0, "ping every WebSocket connection this often (0 = never)")
	deflate := fs.String("deflate", "takeover", "what a client's permessage-deflate offer gets: takeover (as offered), no-takeover (a fresh compressor per message either way), off")
	var window int
	windows := map[string]int{}
	fs.Func("window", "refuse a request whose input is over this many tokens (4 bytes each) with context_length_exceeded: N for every model, MODEL=N for one (repeat the flag)", func(v string) error {
		model, n, one := strings.Cut(v, "=")
		if !one {
			n = model
		}
		w, err := strconv.Atoi(n)
		if err != nil || w < 1 {
			return fmt.Errorf("want N or MODEL=N, N a number of tokens, not %q", v)
		}
		if one {
			windows[model] = w
		} else {
			window = w
		}
		return nil
	})
	verbose := fs.Bool("v", false, "print one line per answered request (transport, connection, warm-up, previous_response_id, outcome; when it arrived and was answered, Unix µs, the time the cost model charged it, and the WebSocket bytes in and out since the connection's previous answer)")
	limits := rateLimitFlags(fs)
	noSteering := fs.Bool("no-steering", false, "refuse every response.steer with steering_not_supported")
	var cost sim.Cost
	fs.DurationVar(&cost.Handshake, "handshake", 0, "simulated WebSocket handshake time")
	fs.DurationVar(&cost.PerRequest, "per-request", 0, "simulated fixed cost of every request")
	fs.DurationVar(&cost.PerInputKB, "per-input-kb", 0, "simulated processing time per KiB of input the server must (re)process")
	fs.DurationVar(&cost.FirstToken, "first-token", 0, "simulated time to the first output item")
	fs.Float64Var(&cost.TokensPerSecond, "tokens-per-second", 0, "pace of streamed deltas (0 = as fast as possible)")
	if err := fs.Parse(args); err != nil {
		return &exitError{2, err}
	}
	laneMode, err := sim.ParseLaneMode(*lanes)
	if err != nil {
		return &exitError{2, fmt.Errorf("--lanes: %w", err)}
	}
	reasoningMode, err := sim.ParseReasoningMode(*reasoning)
	if err != nil {
		return &exitError{2, fmt.Errorf("--reasoning: %w", err)}
	}
	deflateMode, err := sim.ParseDeflateMode(*deflate)
	if err != nil {
		return &exitError{2, fmt.Errorf("--deflate: %w", err)}
	}
	var mu sync.Mutex // one line at a time on stdout
	onAnswered := func(r sim.Received) {
		gen := "-"
		if r.Generate != nil {
			gen = strconv.FormatBool(*r.Generate)
		}
		prev := r.PreviousResponseID
		if prev == "" {
			prev = "-"
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(stdout, "request transport=%s conn=%d type=%s generate=%s prev=%s items=%d bytes=%d tokens=%d outcome=%s at_us=%d answered_us=%d modelled_us=%d wire_in=%d wire_out=%d\n",
			r.Transport, r.Conn, r.Type, gen, prev, len(r.Input), r.Bytes, r.InputTokens, r.Outcome,
			r.At.UnixMicro(), r.AnsweredAt.UnixMicro(), (r.ProcessDelay + r.OutputDelay).Microseconds(), r.WireIn, r.WireOut)
	}
	if !*verbose {
		onAnswered = nil
	}
	opts := sim.Options{APIKey: *key, DisableLanes: *noLanes, Lanes: laneMode, Reasoning: reasoningMode, PingInterval: *ping, Deflate: deflateMode,
		Cost: cost, OnAnswered: onAnswered, ContextWindow: window, Windows: windows, NoSteering: *noSteering}
	limits(&opts)
	opts.OnListen = func(base string) {
		ws := "ws" + strings.TrimPrefix(base, "http")
		fmt.Fprintf(stdout, "hearth sim: Responses API simulator on %s (WebSocket %s/responses); cost: %s\n", base, ws, cost)
	}
	return sim.New(opts).ListenAndServe(ctx, *addr)
}

// rateLimitFlags defines the flags of the simulator's rate limits; the
// function it returns sets them in the Options once the flags are parsed.
func rateLimitFlags(fs *cmdFlags) func(*sim.Options) {
	var o sim.Options
	fs.Int64Var(&o.RateLimitRequests, "rate-limit-requests", sim.DefaultRateLimitRequests, "the requests' rate limit the x-ratelimit headers tell, per minute")
	fs.Int64Var(&o.RateLimitTokens, "rate-limit-tokens", sim.DefaultRateLimitTokens, "the tokens' rate limit the x-ratelimit headers tell, per minute")
	fs.IntVar(&o.RateLimited, "rate-limited", 0, "refuse the first N requests with 429 rate_limit_exceeded and a reset")
	fs.DurationVar(&o.RateLimitReset, "rate-limit-reset", 1500*time.Millisecond, "the reset --rate-limited's refusals give")
	return func(to *sim.Options) {
		to.RateLimitRequests, to.RateLimitTokens, to.RateLimited, to.RateLimitReset = o.RateLimitRequests, o.RateLimitTokens, o.RateLimited, o.RateLimitReset
	}
}
