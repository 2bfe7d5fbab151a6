package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// conn is one connected server: its SDK session and, for a stdio server,
// its process and the tail of its stderr. Created by connect; close stops
// the process (and what it started) and waits for the stderr reader.
type conn struct {
	cfg    Server
	cs     *sdk.ClientSession
	cmd    *exec.Cmd          // stdio only
	stderr *tail              // stdio only
	errR   *os.File           // stdio only: the read end of the stderr pipe
	errW   *os.File           // stdio only: our copy of its write end, closed once the server started
	wg     sync.WaitGroup     // the stderr reader
	stop   context.CancelFunc // ends an HTTP or SSE connection's context
}

// connect starts or dials cfg's server and completes MCP's handshake
// within ctx.
func connect(ctx context.Context, cfg Server, o Options) (*conn, error) {
	client := sdk.NewClient(&sdk.Implementation{Name: "hearth", Version: o.Version}, &sdk.ClientOptions{Logger: o.log()})
	c := &conn{cfg: cfg}
	var tr sdk.Transport
	switch cfg.Transport {
	case Stdio:
		cmd := exec.Command(cfg.Command, cfg.Args...)
		cmd.Dir = o.Dir
		cmd.Env = append(slices.Clone(o.Env), cfg.Env...)
		ownGroup(cmd)
		r, w, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("stderr pipe: %w", err)
		}
		cmd.Stderr = w
		c.cmd, c.stderr, c.errR = cmd, &tail{max: 4 << 10}, r
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			io.Copy(c.stderr, r)
		}()
		tr = &sdk.CommandTransport{Command: cmd, TerminateDuration: o.stopTimeout()}
		c.errW = w // the child has its copy once started: closed after Connect
	case HTTP:
		tr = &sdk.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: headerClient(cfg.Headers), DisableStandaloneSSE: true, MaxRetries: -1}
	case SSE:
		tr = &sdk.SSEClientTransport{Endpoint: cfg.URL, HTTPClient: headerClient(cfg.Headers)}
	}
	if cfg.Transport != Stdio {
		life, stop := context.WithCancel(context.Background())
		c.stop = stop
		tr = lifeTransport{tr, life}
	}
	cs, err := client.Connect(ctx, tr, nil)
	if c.errW != nil {
		c.errW.Close() // the stderr reader ends when the server's copies close
	}
	if err != nil {
		c.close()
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("cannot run %s: %w", cfg.Command, err)
		}
		return nil, c.explain(err)
	}
	c.cs = cs
	return c, nil
}

// explain adds what the server wrote on stderr to err.
func (c *conn) explain(err error) error {
	if c.stderr == nil {
		return err
	}
	if s := strings.TrimSpace(c.stderr.String()); s != "" {
		return fmt.Errorf("%w; its stderr ends: %s", err, s)
	}
	return err
}

// close ends the session (a stdio server gets EOF on stdin, then SIGTERM,
// then SIGKILL), kills whatever the server left in its process group, and
// waits for the stderr reader.
func (c *conn) close() {
	if c.cs != nil {
		c.cs.Close()
	}
	if c.stop != nil {
		c.stop()
	}
	if c.cmd != nil {
		if c.cmd.Process != nil {
			killGroup(c.cmd)
			if c.cs == nil && c.cmd.ProcessState == nil {
				c.cmd.Wait() // a failed handshake left it unreaped
			}
		}
		c.drainStderr()
	}
}

// stderrGrace is how long close lets the stderr reader read what the
// server wrote before it exited: what explain shows.
const stderrGrace = time.Second

// drainStderr waits for the stderr reader to reach the pipe's end — every
// write end closed: the server's, once it exited, and what it started,
// killed with its group — at most stderrGrace, then closes the read end
// (something that left the group may still hold a write end).
func (c *conn) drainStderr() {
	done := make(chan struct{})
	go func() {
		c.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(stderrGrace):
	}
	c.errR.Close()
	<-done
}

// lifeTransport connects within the handshake's context but gives the
// connection life (SSE's stream is a GET that lives as long as the context
// it was made with): the connection ends with life, not with the handshake.
type lifeTransport struct {
	inner sdk.Transport
	life  context.Context
}

func (t lifeTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	cctx, cancel := context.WithCancel(t.life)
	abort := context.AfterFunc(ctx, cancel)
	conn, err := t.inner.Connect(cctx)
	if !abort() {
		// The handshake's context ended while connecting.
		if conn != nil {
			conn.Close()
		}
		return nil, errors.Join(ctx.Err(), err)
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return conn, nil // cancelled with life
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// headerClient is an HTTP client that sends headers with every request.
func headerClient(headers [][2]string) *http.Client {
	if len(headers) == 0 {
		return nil // the SDK's default
	}
	return &http.Client{Transport: headerTransport{base: http.DefaultTransport, headers: headers}}
}

type headerTransport struct {
	base    http.RoundTripper
	headers [][2]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for _, kv := range h.headers {
		r.Header.Set(kv[0], kv[1])
	}
	return h.base.RoundTrip(r)
}

// discard is the SDK's logger when the caller gives none.
var discard = slog.New(slog.DiscardHandler)
