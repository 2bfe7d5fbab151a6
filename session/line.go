package session

import (
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/hearthd/hearth/session/transcript"
)

// line is a conversation's line to the model: its lane on the workspace's
// Client, the baseline the server holds there, the settings its requests
// are built from (its Choice over the Client's configuration), and the
// request path itself — prepare, commit, send, read, settle (request.go,
// read.go). One request at a time uses it: the turn's, or the warm-up's
// while no turn runs. It lives as long as its Conversation, whose Close
// frees its lane.
type line struct {
	id     string
	client *Client
	tr     *transcript.Transcript
	box    *toolbox
	log    *slog.Logger
	steer  *steering // the running turn's steering (steer.go)
	// cacheKey is the requests' prompt_cache_key (Options.cacheKey).
	cacheKey string

	setCache settingsCache
	choice   atomic.Pointer[Choice] // the session's own model and effort (choice.go)

	mu   sync.Mutex // guards lane, base and held
	lane string
	base *baseline
	held *heldInput // steering the server holds for the next request (steer.go)
}

// config is the configuration the line's requests are built from: the
// Client's, with the session's Choice applied (Config.Choose).
func (l *line) config() Config {
	ch := l.choice.Load()
	return l.client.Config().Choose(ch.Model, ch.Effort)
}

// forget drops the baseline: the server no longer holds it.
func (l *line) forget() {
	l.mu.Lock()
	l.base = nil
	l.mu.Unlock()
}

// lost reports whether the server no longer holds the baseline (a dropped
// connection, a cancel, a failure, or a transcript that moved on: Epoch).
// A connection is marked dead before its reader reports it, so a check
// made after the turn token is back never misses a loss that rewarm
// skipped while the turn held the token.
func (l *line) lost() bool {
	epoch := l.tr.View().Epoch()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.base == nil || !l.base.conn.Alive() || l.base.epoch != epoch
}

// laneName is the line's lane now (a walked-away lane is replaced).
func (l *line) laneName() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lane
}

// nextInput estimates the input tokens of the next request
// (Transcript.NextInput), the settings and the guidance counted by their
// bytes.
func (l *line) nextInput() int {
	_, key, err := l.settings()
	head, _ := l.head()
	if err != nil {
		key = nil // the request will fail on its own; the estimate goes without
	}
	n := len(key)
	for _, it := range head {
		n += len(it)
	}
	return l.tr.NextInput(n)
}

// overWindow says whether the next request would be past the compaction
// threshold (CompactAt of a known window) and the view has grown since the
// last compaction: a view still past the threshold right after one (its
// initial items, the summary and the running turn's items) is not
// compacted again until something new is added to it.
func (l *line) overWindow() bool {
	cfg := l.config()
	if cfg.ContextWindow <= 0 {
		return false
	}
	return l.tr.Grown() && float64(l.nextInput()) > cfg.CompactAt*float64(cfg.ContextWindow)
}
