// Package daemon is hearth's process: the unix-socket and stdio listeners,
// one clientConn per editor connection, the registry of open workspaces
// (each with one Responses Client) and sessions (each with one
// Conversation), and the fan-out of session updates to every attached
// client.
//
// The daemon talks to the model API at Config.BaseURL; in simulator mode
// that is the built-in simulator its caller runs (cmd/hearth), so the
// simulator is no part of the daemon.
//
// What lives how long: a Daemon from New to Close (its goroutines, the
// reaper's loop and the spares' makers among them, are owned by its wait
// group); a clientConn from accept to hang-up, writing through its outbox
// (one writer goroutine, a byte bound, a write deadline: an editor that
// stops reading is disconnected, never waited for); an openWorkspace from
// its first session to HEARTH_WORKSPACE_IDLE without one; an openSession
// from session/new, load or resume to HEARTH_SESSION_IDLE without an editor
// or a turn. session/load replays the stored items a page at a time
// (loadPage) and within half the outbox's bound, so memory stays flat
// however long the transcript. A session/prompt is a promptTurn: one per
// session at a time, claimed on the read loop so a session/cancel that
// follows always finds it.
//
// Imports: daemon sits above rpc, workspace, session, store, mcp and
// safesocket (the socket file, its peers and the data directory's lock);
// only cmd imports it.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/safesocket"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/store"
	"github.com/hearthd/hearth/workspace/sandbox"
	"github.com/hearthd/hearth/workspace/watch"
)

// Daemon is the per-user process state. Created by New; Serve runs an
// accept loop on a listener; ServeConn serves one connection (stdio);
// Close stops accepting, disconnects clients, cancels running turns, closes
// sessions, workspaces and the database, and waits for every goroutine it
// started (the reaper of idle sessions and workspaces among them). A
// simulator the caller runs for it is the caller's to close, after Close.
type Daemon struct {
	cfg     Config
	log     *slog.Logger
	db      *store.DB
	lock    *safesocket.DataDirLock // the data directory's, held until the database closed
	started time.Time
	watches *watch.Hub        // the workspaces' shared inotify instance; closed by Close after them
	ckpt    *checkpointKeeper // the checkpoint store's budget and sweeps (checkpoint_gc.go)

	ctx    context.Context // cancelled by Close (cause session.ErrShutdown): ends turns and connections
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup // accept loops, client connections
	turns  sync.WaitGroup // running turns, for Shutdown's drain; Add only under mu and while not draining

	settings settings // the sessions' modes and config options

	lastBusy atomic.Int64 // unix nanos when the daemon last had a client or a turn

	reaper    reaper    // closes idle sessions and workspaces (lifetime.go)
	spares    spares    // the workspaces' spare sessions (spare.go)
	admission admission // which connections on the socket are served (socket_call.go)

	left    chan struct{}            // guarded by mu; closed and replaced each time an editor's connection ends (tests wait on it)
	opening map[string]chan struct{} // guarded by mu: opens in progress (workspace roots, "session:"+id), closed when done

	mu         sync.Mutex // guards workspaces, sessions, clients, listeners, closed, draining, nextClient
	workspaces map[string]*openWorkspace
	sessions   map[string]*openSession
	clients    map[*clientConn]struct{}
	listeners  []net.Listener
	closed     bool
	draining   bool // Shutdown waits for the running turns: no new one starts
	nextClient int
	netDial    func(ctx context.Context, network, addr string) (net.Conn, error) // tests: dials the model API; nil: the network

	reloading sync.Mutex // held by Reload, before mu: reloads reach the workspaces' clients in order
}

// New takes the data directory's lock (one daemon per directory: a second
// is refused, safesocket.ErrDataDirInUse) and opens the database, marking turns that
// were running when a previous daemon died as interrupted. In simulator
// mode cfg.BaseURL must be the simulator's, which the caller started.
func New(cfg Config, log *slog.Logger) (*Daemon, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := cfg.checkRunnable(); err != nil {
		return nil, err
	}
	socket := cfg.Socket
	if cfg.NoSocket != "" {
		socket = ""
	}
	lock, err := safesocket.LockDataDir(cfg.DataDir, socket, cfg.NoSocket)
	if err != nil {
		return nil, err
	}
	db, err := store.Open(cfg.DBPath())
	if err != nil {
		lock.Release()
		return nil, fmt.Errorf("open database: %w", err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	d := &Daemon{
		cfg: cfg, log: log, db: db, lock: lock, started: time.Now(), ctx: ctx, cancel: cancel, watches: watch.NewHub(log),
		workspaces: map[string]*openWorkspace{}, sessions: map[string]*openSession{},
		clients: map[*clientConn]struct{}{}, left: make(chan struct{}),
		opening: map[string]chan struct{}{},
		ckpt:    &checkpointKeeper{db: db, objects: checkpointObjects(cfg.DataDir), log: log},
	}
	d.settings = settings{db: db, network: func() string { return d.Config().ShellNetwork },
		modelSet: func() bool { return d.Config().Model != "" }}
	d.reaper.d, d.spares.d, d.admission.log = d, d, log
	d.lastBusy.Store(time.Now().UnixNano())
	if err := checkDB(ctx, db, log); err != nil {
		d.Close()
		return nil, err
	}
	if n, err := db.Items().InterruptRunning(ctx); err != nil {
		d.Close()
		return nil, fmt.Errorf("mark interrupted turns: %w", err)
	} else if n > 0 {
		log.Info("turns interrupted by the previous daemon's exit", "count", n)
	}
	if n, err := db.DeleteSpares(ctx); err != nil {
		d.Close()
		return nil, fmt.Errorf("delete spare sessions: %w", err)
	} else if n > 0 {
		log.Debug("spare sessions of the previous daemon deleted", "count", n)
	}
	if err := d.ckpt.sweep(ctx); err != nil {
		log.Warn("sweeping the checkpoint store", "err", err) // orphans only take room; the next start tries again
	}
	// Whether commands can be cut off the network is asked of the kernel
	// once (a helper process): ahead of the first session's modes.
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		sandbox.NetworkEnforced()
	}()
	d.wg.Add(1)
	go d.reaper.loop(min(cfg.sessionIdle(), cfg.workspaceIdle()) / 4)
	return d, nil
}

// startCheck bounds the database check at start: quick_check reads the
// whole file (docs/RELIABILITY.md has its time on a large database), and a
// start that waits longer than this is worse than one not checked.
const startCheck = 5 * time.Second

// checkDB runs db's quick check at start, so that a damaged database
// is refused here, with the file and the fix named, rather than failing
// turns at random later. A check that takes over startCheck is cut short
// and logged: the daemon starts unchecked. Nothing is moved or deleted.
func checkDB(ctx context.Context, db *store.DB, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, startCheck)
	defer cancel()
	start := time.Now()
	err := db.QuickCheck(ctx)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		log.Warn("database not checked: quick_check took over "+startCheck.String()+"; `hearth doctor` runs the full check", "db", db.Path())
		return nil
	case err != nil:
		return fmt.Errorf("check database: %w", err)
	}
	log.Info("database checked", "db", db.Path(), "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// Reload applies a new configuration (SIGHUP): the API key, base URL,
// model and timeouts of every open workspace and of those opened later.
// The socket and data directory cannot change without a restart. A reload
// into simulator mode brings the simulator's BaseURL, as New's cfg does.
func (d *Daemon) Reload(cfg Config) error {
	if err := cfg.checkRunnable(); err != nil {
		return err
	}
	d.reloading.Lock()
	defer d.reloading.Unlock()
	d.mu.Lock()
	cfg.Socket, cfg.DataDir, cfg.Version, cfg.Credentials = d.cfg.Socket, d.cfg.DataDir, d.cfg.Version, d.cfg.Credentials
	d.cfg = cfg
	var clients []*session.Client
	for _, w := range d.workspaces {
		clients = append(clients, w.client)
	}
	sc := cfg.sessionConfig(d.netDial)
	d.mu.Unlock()
	d.log.Info("configuration reloaded", "base", rpc.RedactURL(cfg.BaseURL), "model", cfg.Model, "simulator", cfg.Simulator)
	// Outside d.mu: a client retires its connections, and closing one may
	// wait on the network (a TLS close waits up to 5 s for a peer that
	// stopped reading).
	for _, c := range clients {
		c.Reconfigure(sc)
	}
	return nil
}

// Config returns the configuration in effect.
func (d *Daemon) Config() Config {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cfg
}

// DB returns the daemon's database.
func (d *Daemon) DB() *store.DB { return d.db }

// Serve accepts connections on ln until ln fails or the daemon closes.
func (d *Daemon) Serve(ln net.Listener) error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		ln.Close()
		return errClosed
	}
	d.listeners = append(d.listeners, ln)
	d.wg.Add(1)
	d.mu.Unlock()
	defer d.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			if d.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("accept: %w", err)
		}
		if !d.admission.admit(c) {
			c.Close()
			continue
		}
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.ServeConn(c)
		}()
	}
}

// errClosed refuses what arrives while the daemon drains or after it closed:
// the editor gets -32011 and may send it again to the next daemon.
var errClosed = rpc.ErrShuttingDown

// Shutdown stops accepting connections, lets running turns finish for up to
// drain, then interrupts the rest (they are stored as interrupted) and
// closes everything (Close).
func (d *Daemon) Shutdown(drain time.Duration) error {
	d.lock.Closing()
	d.mu.Lock()
	lns := d.listeners
	d.draining = true // after this no turn starts (turns.Add), so Wait is not racing one
	d.mu.Unlock()
	for _, ln := range lns {
		ln.Close()
	}
	done := make(chan struct{})
	go func() {
		d.turns.Wait()
		close(done)
	}()
	t := time.NewTimer(drain)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		d.log.Info("drain time over: interrupting running turns")
	}
	return d.Close()
}

// IdleFor reports how long the daemon has had no client and no running
// turn; zero while it has either.
func (d *Daemon) IdleFor() time.Duration {
	d.mu.Lock()
	busy := len(d.clients) > 0
	for _, s := range d.sessions {
		s.mu.Lock()
		busy = busy || s.cancel != nil
		s.mu.Unlock()
	}
	d.mu.Unlock()
	if busy {
		d.lastBusy.Store(time.Now().UnixNano())
		return 0
	}
	return time.Since(time.Unix(0, d.lastBusy.Load()))
}

// Close shuts the daemon down; see the type's doc.
func (d *Daemon) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	d.lock.Closing()
	lns := d.listeners
	clients := make([]*clientConn, 0, len(d.clients))
	for c := range d.clients {
		clients = append(clients, c)
	}
	d.mu.Unlock()

	d.cancel(session.ErrShutdown)
	for _, ln := range lns {
		ln.Close()
	}
	for _, c := range clients {
		c.close()
	}
	d.wg.Wait()

	d.mu.Lock()
	sessions, workspaces := d.sessions, d.workspaces
	d.sessions, d.workspaces = map[string]*openSession{}, map[string]*openWorkspace{}
	d.mu.Unlock()
	for _, s := range sessions {
		s.close()
	}
	for _, w := range workspaces {
		d.spares.closeWorkspace(w)
	}
	d.watches.Close()
	err := d.db.Close()
	d.lock.Release()
	return err
}

// pid is split out for tests of status.
var pid = os.Getpid
