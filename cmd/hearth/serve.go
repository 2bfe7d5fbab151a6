package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/hearthd/hearth/daemon"
	"github.com/hearthd/hearth/installer"
	"github.com/hearthd/hearth/safesocket"
)

func loadConfig() (daemon.Config, error) {
	cfg, err := daemon.FromEnv()
	cfg.Version = version
	return cfg, err
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	// A re-executed image (see below) gets the key on the pipe --key-fd
	// names, its first argument.
	args, startKey, reexeced, err := takeKeyFD(args)
	if err != nil {
		return &exitError{2, err}
	}
	o, err := parseServeFlags(args, stderr)
	if err != nil {
		return &exitError{2, err}
	}
	// Then the hidden re-exec that takes the API key and other secrets out
	// of /proc/PID/environ (sandbox_key_unix.go); after the flags, so that a
	// mistake or --help needs none.
	if !reexeced {
		if err := hideSecretsFromEnviron(args); err != nil {
			fmt.Fprintln(stderr, "hearth: warning: the API key stays in this process's environment:", err)
		}
	}
	ready, err := readyFile(o.readyFD)
	if err != nil {
		return &exitError{2, err}
	}
	// A failure before the daemon is ready is told to the starter on the
	// same descriptor, in the daemon's own words (tellStarter); it closes
	// when the process exits.
	defer func() { tellStarter(ready, err) }()
	fromFile := map[string]bool{}
	cfg, serveConfig, err := serveConfigAtStart(fromFile, startKey, o)
	if err != nil {
		return err
	}
	dumpErr := notDumpable()
	configureSandbox(cfg)
	log, closeLog, err := openServeLog(cfg, o.stdio, stderr)
	if err != nil {
		return err
	}
	defer closeLog()
	if dumpErr != nil {
		log.Warn("cannot mark the daemon not dumpable: processes of your user may read its memory", "err", dumpErr)
	}
	if o.stdio {
		cfg.NoSocket = "hearth serve --stdio"
	}
	// The socket first: of daemons started together on one socket, the one
	// that listens is the one that opens the database; the others exit at
	// once and their starters' connections queue on its socket meanwhile.
	var ln net.Listener
	if !o.stdio {
		if ln, err = safesocket.Listen(cfg.Socket); err != nil {
			return socketFailure{err}
		}
	}
	var simulator builtinSim // closed after the daemon (defers run last first)
	defer simulator.Close()
	creds := reloadingCredentials(fromFile, serveConfig, cfg.Socket, &simulator, log)
	cfg.Credentials = creds
	d, err := newServeDaemon(cfg, log, &simulator)
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		return err
	}
	defer d.Close()
	creds.d = d
	if o.stdio {
		serveStdio(ctx, d)
		return nil
	}
	log.Info("hearth listening", "socket", cfg.Socket, "data", cfg.DataDir, "simulator", cfg.Simulator, "version", version)
	if ready != nil {
		tellReady(ready, log)
		ready = nil
	}
	return serveSocket(ctx, d, ln, log, creds, o)
}

// tellReady writes the byte the starter waits for on its descriptor, and
// closes it: connections queue on the listening socket until Serve accepts
// them.
func tellReady(ready *os.File, log *slog.Logger) {
	if _, err := ready.Write([]byte{'\n'}); err != nil {
		log.Warn("could not tell the starter the daemon is ready", "err", err)
	}
	ready.Close()
}

// reloadingCredentials is the daemon's Credentials: a reload (SIGHUP, ACP
// authenticate) reads the environment file and the environment again, as
// at start, on the same socket, pointing simulator mode at simulator.
func reloadingCredentials(fromFile map[string]bool, serveConfig func() (daemon.Config, error), socket string, simulator *builtinSim, log *slog.Logger) *envCredentials {
	return &envCredentials{reload: func() (daemon.Config, error) {
		if err := applyEnvFile(fromFile); err != nil {
			return daemon.Config{}, err
		}
		next, err := serveConfig()
		if err == nil {
			next.Socket = socket
			err = simulator.point(&next, log)
		}
		return next, err
	}}
}

// serveConfigAtStart reads the env file (the variables it set recorded in
// fromFile, for a reload) and the configuration, the flags applied, and
// returns the function that reads the configuration again.
func serveConfigAtStart(fromFile map[string]bool, startKey string, o serveOpts) (daemon.Config, func() (daemon.Config, error), error) {
	if err := applyEnvFile(fromFile); err != nil {
		return daemon.Config{}, nil, err
	}
	if startKey == envFileKey() {
		startKey = "" // the service manager's, from the env file (systemd): the file governs it, so login and logout apply
	}
	serveConfig := serveConfigWith(startKey)
	cfg, err := serveConfig()
	if err != nil {
		return cfg, nil, err
	}
	if o.socket != "" {
		cfg.Socket = o.socket
	}
	return cfg, serveConfig, nil
}

// serveOpts are serve's flags.
type serveOpts struct {
	socket          string
	stdio           bool
	idleExit, drain time.Duration
	readyFD         int
}

func parseServeFlags(args []string, stderr io.Writer) (serveOpts, error) {
	var o serveOpts
	fs := newFlags("serve", stderr)
	fs.StringVar(&o.socket, "socket", "", "unix socket path (default $HEARTH_SOCKET, else the per-user runtime dir)")
	fs.BoolVar(&o.stdio, "stdio", false, "serve one client on stdin/stdout instead of the socket")
	fs.DurationVar(&o.idleExit, "idle-exit", 0, "exit after this long with no client and no running turn (0: never; hearth acp sets it when it starts the daemon)")
	fs.DurationVar(&o.drain, "drain", 10*time.Second, "on SIGTERM, how long running turns may finish before they are interrupted")
	fs.IntVar(&o.readyFD, "ready-fd", -1, "write a byte to this inherited descriptor once listening, then close it (hearth acp and ask set it when they start the daemon)")
	return o, fs.Parse(args)
}

// serveConfigWith reads the daemon's configuration; the key the process
// was started with wins over the env file's, as when it was still in the
// environment, and a reload keeps it.
func serveConfigWith(startKey string) func() (daemon.Config, error) {
	return func() (daemon.Config, error) {
		cfg, err := loadConfig()
		if startKey != "" {
			cfg.APIKey = startKey
			if cfg.BaseURL == "" {
				cfg.Simulator = false
			}
		}
		return cfg, err
	}
}

// openServeLog is the daemon's logger: stderr, and with a socket the data
// directory's hearth.log too (rotated), which closeLog closes.
func openServeLog(cfg daemon.Config, stdio bool, stderr io.Writer) (log *slog.Logger, closeLog func(), err error) {
	out, closeLog := stderr, func() {}
	if !stdio {
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, nil, err
		}
		lf, err := daemon.OpenLogFile(filepath.Join(cfg.DataDir, "hearth.log"), daemon.DefaultLogMax)
		if err != nil {
			return nil, nil, err
		}
		out, closeLog = io.MultiWriter(stderr, lf), func() { lf.Close() }
	}
	return slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelInfo})), closeLog, nil
}

// newServeDaemon points a configuration in simulator mode at the built-in
// simulator (started on first need) and makes the daemon.
func newServeDaemon(cfg daemon.Config, log *slog.Logger, simulator *builtinSim) (*daemon.Daemon, error) {
	if err := simulator.point(&cfg, log); err != nil {
		return nil, err
	}
	return daemon.New(cfg, log)
}

// serveStdio serves one client on stdin/stdout until it hangs up or ctx
// ends.
func serveStdio(ctx context.Context, d *daemon.Daemon) {
	// Non-blocking stdin so closing it ends a pending read at shutdown.
	syscall.SetNonblock(0, true)
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.ServeConn(stdioConn{os.Stdin, os.Stdout})
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// serveSocket serves ln until the listener fails, ctx ends (SIGTERM: the
// running turns get o.drain), or the daemon has been idle for o.idleExit;
// SIGHUP reloads the configuration.
func serveSocket(ctx context.Context, d *daemon.Daemon, ln net.Listener, log *slog.Logger, creds *envCredentials, o serveOpts) error {
	errc := make(chan error, 1)
	go func() { errc <- d.Serve(ln) }()
	hup := make(chan os.Signal, 1)
	notifyHangup(hup)
	defer signal.Stop(hup)
	var idle <-chan time.Time
	if o.idleExit > 0 {
		t := time.NewTicker(min(o.idleExit/4, time.Second))
		defer t.Stop()
		idle = t.C
	}
	for {
		select {
		case err := <-errc:
			return err
		case <-ctx.Done():
			log.Info("shutting down", "drain", o.drain)
			d.Shutdown(o.drain)
			<-errc
			log.Info("stopped")
			return nil
		case <-hup:
			// SIGHUP: read the environment file and the environment again.
			if err := creds.Reload(); err != nil {
				log.Warn("reload: keeping the configuration", "err", err)
			}
		case <-idle:
			if d.IdleFor() >= o.idleExit {
				log.Info("idle: exiting", "after", o.idleExit)
				d.Close()
				<-errc
				return nil
			}
		}
	}
}

// applyEnvFile reads ~/.config/hearth/env (where `hearth install` tells
// users to put OPENAI_API_KEY, never in the unit) into the environment;
// variables the process was started with win. launchd has no
// EnvironmentFile, so the daemon reads it itself everywhere. fromFile
// holds the variables an earlier call took from the file: on a reload
// they are replaced (or removed) by the file's new contents.
func applyEnvFile(fromFile map[string]bool) error {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil
	}
	vars, err := installer.LoadEnvFile(installer.Spec{Home: home}.EnvFile())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("environment file: %w", err)
	}
	for k := range fromFile {
		os.Unsetenv(k)
		delete(fromFile, k)
	}
	for k, v := range vars {
		if _, set := os.LookupEnv(k); !set {
			os.Setenv(k, v)
			fromFile[k] = true
		}
	}
	return nil
}

// stdioConn joins stdin and stdout into one connection.
type stdioConn struct {
	r *os.File
	w *os.File
}

func (c stdioConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c stdioConn) Write(p []byte) (int, error) { return c.w.Write(p) }
func (c stdioConn) Close() error {
	err := c.r.Close()
	if werr := c.w.Close(); err == nil {
		err = werr
	}
	return err
}
