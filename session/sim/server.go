package sim

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Options configures a Server. The zero value is a free server with lanes on and no auth.
type Options struct {
	APIKey       string            // when set, require "Authorization: Bearer <APIKey>" on both transports
	MaxAge       time.Duration     // WebSocket connection lifetime; default 60 minutes
	PushAgeLimit bool              // at MaxAge push the limit error on the idle socket (default: answer the next create)
	Cost         Cost              // simulated latencies; zero = free
	Model        string            // model name used when a request has none; default "sim-model"
	ReadLimit    int64             // largest accepted frame or body; default 64 MiB
	WriteTimeout time.Duration     // per-frame write deadline; default 10 s
	OnListen     func(base string) // called with the base URL (http://HOST:PORT/v1) once Start or ListenAndServe listens

	// Lanes says what stream_id does: LanesOn (default), LanesIgnore or LanesRefuse.
	Lanes LaneMode
	// DisableLanes is the old lane-less mode, kept for existing tests: one response at a
	// time per connection, stream_id refused with invalid_stream_id (echoed). It wins over Lanes.
	DisableLanes bool

	Reasoning     ReasoningMode // which models reason; default ReasoningAuto
	Secret        []byte        // seals reasoning encrypted_content; empty = a fixed built-in secret
	ContextWindow int           // tokens (4 bytes each, as usage counts) an effective input may hold; 0 = unlimited
	// Windows gives models a window of their own (tokens, as ContextWindow); a model it does
	// not name has ContextWindow.
	Windows map[string]int
	Models  []string // when non-empty, the only models that exist; others get 404 model_not_found

	// Hint, when set, ends every echoed answer ("You said: …") after a
	// blank line: the daemon's simulator (no API key) says there what to try
	// (NoKeyHint).
	Hint string

	// NoSteering makes every response refuse response.steer with steering_not_supported,
	// as a model or execution mode without steering does.
	NoSteering bool
	// RateLimitRequests and RateLimitTokens are the limits the rate-limit
	// headers tell (0: DefaultRateLimitRequests, DefaultRateLimitTokens).
	// RateLimited makes the first RateLimited creates refused with 429 and
	// a reset of RateLimitReset (default 1.5 s), as Server.RateLimit does.
	RateLimitRequests, RateLimitTokens int64
	RateLimited                        int
	RateLimitReset                     time.Duration

	// OnSteerAccepted, if set, is called with a steering submission's id
	// once its response.steer.accepted is written to a running response's
	// stream, on that response's goroutine: the response goes on when it
	// returns (a test holds it there, between the acknowledgement and the
	// successor). Same rules as OnAnswered.
	OnSteerAccepted func(steerID string)

	PingInterval time.Duration // when > 0, the server pings every WebSocket connection this often
	IgnorePings  bool          // do not answer client pings (no pong), to test a client's keepalive

	// Deflate is the answer to a client's permessage-deflate offer: DeflateTakeover (default),
	// DeflateNoTakeover or DeflateOff.
	Deflate DeflateMode

	// OnAnswered, if set, is called with each request's record once it is
	// answered (hearth sim -v prints them). It runs on the goroutine that
	// answered and must not call the Server's fault methods.
	OnAnswered func(Received)
	// OnReceived, if set, is called with each request's record as it
	// arrives, before the server works on it (tests use it to act at a
	// request's start). Same rules as OnAnswered.
	OnReceived func(Received)
	// OnDelta, if set, is called after each text delta is written, with
	// its connection (Received.Conn: 0 for HTTP) and lane ("" for the
	// default lane), its text and the time: a benchmark measures a
	// client's relay delay from it. It runs on the response's goroutine,
	// between deltas: keep it short.
	OnDelta func(conn int, streamID, delta string, at time.Time)
}

func (o Options) maxAge() time.Duration {
	if o.MaxAge <= 0 {
		return 60 * time.Minute
	}
	return o.MaxAge
}

func (o Options) model() string {
	if o.Model == "" {
		return "sim-model"
	}
	return o.Model
}

// window is the context window of model, in tokens; 0 = unlimited.
func (o Options) window(model string) int {
	if w, ok := o.Windows[model]; ok {
		return w
	}
	return o.ContextWindow
}

// authorized reports whether r carries the APIKey, when one is required.
func (o Options) authorized(r *http.Request) bool {
	if o.APIKey == "" {
		return true
	}
	want := "Bearer " + o.APIKey
	return subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(want)) == 1
}

func (o Options) readLimit() int64 {
	if o.ReadLimit <= 0 {
		return 64 << 20
	}
	return o.ReadLimit
}

func (o Options) writeTimeout() time.Duration {
	if o.WriteTimeout <= 0 {
		return 10 * time.Second
	}
	return o.WriteTimeout
}

// Server is the simulated Responses API. New creates it; it serves as an http.Handler
// (ServeHTTP), on its own listener (Start, ListenAndServe), or both, until Close. Close closes
// the listener and every live connection and waits for every goroutine the Server started.
type Server struct {
	opts     Options
	ctx      context.Context // cancelled by Close; every request context derives from it
	cancel   context.CancelFunc
	upgrader websocket.Upgrader

	mu        sync.Mutex // guards closed, hs, serveDone and serveErr
	closed    bool
	hs        *http.Server  // set by Start/ListenAndServe
	serveDone chan struct{} // closed when hs.Serve returns
	serveErr  error

	records *recorder     // every request's record, and the pings (record.go)
	faults  faultQueue    // injected faults not yet used up (faults.go)
	conns   connSet       // live WebSocket connections (conns.go)
	stored  responseStore // HTTP responses created under store:true, for previous_response_id (stored.go)
	wire    wireConns     // the own listener's TCP connections and their bytes (wire_count.go)
	limits  *rateWindow   // the requests and tokens of the rate limits' current window (ratelimit.go)

	closeOnce sync.Once
	closeDone chan struct{}
	handlers  sync.WaitGroup // ServeHTTP calls in progress, WebSocket connections included
}

// New returns a Server; it serves nothing until used as a handler or started.
func New(opts Options) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	limits := &rateWindow{}
	s := &Server{
		opts: opts, ctx: ctx, cancel: cancel,
		upgrader: websocket.Upgrader{
			CheckOrigin:      func(*http.Request) bool { return true },
			HandshakeTimeout: 10 * time.Second,
			// Compression is wsdeflate's, below gorilla (negotiateDeflate); a read buffer of the
			// upgrader's own makes gorilla read through it rather than the hijacked one.
			ReadBufferSize: 4096,
		},
		records:   newRecorder(opts.OnReceived, opts.OnAnswered, limits),
		limits:    limits,
		closeDone: make(chan struct{}),
	}
	if opts.RateLimited > 0 {
		s.RateLimit(opts.RateLimited, opts.RateLimitReset)
	}
	return s
}

// Start listens on 127.0.0.1 at a free port and returns the base URL, http://127.0.0.1:PORT/v1.
func (s *Server) Start() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("sim: listen: %w", err)
	}
	if err := s.serve(ln); err != nil {
		return "", err
	}
	return "http://" + ln.Addr().String() + "/v1", nil
}

// ListenAndServe serves on addr until ctx is cancelled, then closes the Server and returns nil.
// It returns early with an error if the listener fails.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("sim: listen on %s: %w", addr, err)
	}
	if err := s.serve(ln); err != nil {
		return err
	}
	s.mu.Lock()
	done := s.serveDone
	s.mu.Unlock()
	select {
	case <-ctx.Done():
	case <-done:
	}
	s.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.serveErr
}

func (s *Server) serve(ln net.Listener) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.hs != nil {
		ln.Close()
		return errors.New("sim: server already started or closed")
	}
	ln = s.wire.listener(ln)
	s.hs = &http.Server{Handler: s, ConnState: s.wire.connState, ReadHeaderTimeout: 10 * time.Second}
	s.serveDone = make(chan struct{})
	hs, done := s.hs, s.serveDone
	if s.opts.OnListen != nil {
		s.opts.OnListen("http://" + ln.Addr().String() + "/v1")
	}
	go func() {
		defer close(done)
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.mu.Lock()
			s.serveErr = fmt.Errorf("sim: serve: %w", err)
			s.mu.Unlock()
		}
	}()
	return nil
}

// Close stops serving: it closes the listener, sends every WebSocket a 1001 close frame and
// drops it, aborts HTTP streams, and waits for every goroutine of the Server. Safe to call twice.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		hs, done := s.hs, s.serveDone
		s.mu.Unlock()
		conns := s.conns.closeAll()

		s.cancel()
		if hs != nil {
			hs.Close()
			<-done // no new connections after Serve returns, so wire.wait is safe below
		}
		for _, c := range conns {
			c.shutdown()
		}
		s.handlers.Wait()
		s.wire.wait()
		close(s.closeDone)
	})
	<-s.closeDone
	return nil
}

// DropConnections drops every live WebSocket connection at once, without a close frame, as a
// network failure does, and returns how many it dropped. Their responses in flight end with
// OutcomeClosed; their connection-local caches are gone.
func (s *Server) DropConnections() int {
	conns := s.conns.list()
	for _, c := range conns {
		c.close(CloseAbrupt)
	}
	return len(conns)
}

// Handshakes is the number of WebSocket upgrade attempts so far, refused ones included.
func (s *Server) Handshakes() int { return s.conns.handshakeCount() }

// ServeHTTP routes GET …/responses (WebSocket), POST …/responses (HTTP, SSE when stream:true),
// POST …/responses/compact (compact.go) and GET …/models (models.go).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/models") {
		s.serveModels(w, r)
		return
	}
	if strings.HasSuffix(r.URL.Path, "/responses/compact") && r.Method == http.MethodPost {
		if !s.enter() {
			apiError{Status: 503, Type: "server_error", Code: "server_closed", Message: "The simulator is shutting down."}.writeHTTP(w)
			return
		}
		defer s.handlers.Done()
		s.serveCompact(w, r)
		return
	}
	if !strings.HasSuffix(r.URL.Path, "/responses") {
		apiError{Status: 404, Type: "invalid_request_error", Code: "not_found",
			Message: "Unknown path " + r.URL.Path}.writeHTTP(w)
		return
	}
	if !s.enter() {
		apiError{Status: 503, Type: "server_error", Code: "server_closed", Message: "The simulator is shutting down."}.writeHTTP(w)
		return
	}
	defer s.handlers.Done()
	s.limits.headers(w.Header(), s.opts)
	switch r.Method {
	case http.MethodGet:
		s.serveWS(w, r)
	case http.MethodPost:
		s.serveHTTPCreate(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		apiError{Status: 405, Type: "invalid_request_error", Code: "method_not_allowed",
			Message: "Use GET (WebSocket) or POST."}.writeHTTP(w)
	}
}

// enter registers a handler unless the Server is closed (so Close's Wait never races an Add).
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.handlers.Add(1)
	return true
}

// requestContext ends when the client goes away or the Server closes.
func (s *Server) requestContext(r *http.Request) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(s.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

// marshal encodes an event. The values are built here from valid JSON, so a failure is a bug:
// it is reported as an error of the write, and the response ends as if the connection broke.
func marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("sim: encoding an event: %w", err)
	}
	return b, nil
}
