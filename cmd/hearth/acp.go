package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hearthd/hearth/daemon"
	"github.com/hearthd/hearth/safesocket"
)

// runACP relays stdin/stdout to the daemon's socket byte for byte; the
// daemon detects the framing. It starts the daemon when nothing answers,
// the way `gopls -remote=auto` does.
func runACP(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	// An editor runs ACP's terminal auth method as the agent's command with
	// the method's args: `hearth acp login`.
	if len(args) > 0 && args[0] == "login" {
		return runLogin(ctx, args[1:], stdout, stderr)
	}
	fs := newFlags("acp", stderr)
	if err := fs.Parse(args); err != nil {
		return &exitError{2, err}
	}
	cfg, err := loadConfig()
	if err == nil {
		err = cfg.Check()
	}
	var conn net.Conn
	if err == nil {
		conn, err = dialOrStart(ctx, cfg, stderr)
	}
	if err != nil {
		// The editor hears why, in answer to its initialize, at once.
		failFirstCall(os.Stdin, stdout, err)
		return err
	}
	return relay(ctx, conn, os.Stdin, stdout, func() (net.Conn, error) { return dialOrStart(ctx, cfg, stderr) })
}

// startWait bounds how long a client waits for a daemon it started to be
// ready: opening a large database or a slow disk, never a fixed delay.
const startWait = 15 * time.Second

// errDaemonExited: the started daemon exited before it was ready.
var errDaemonExited = errors.New("the daemon exited before it listened")

// dialOrStart connects to the daemon, starting `hearth serve` detached
// (startDaemon) when no daemon answers. It waits for the daemon's own
// word that it listens (startedDaemon.wait), then dials once. A socket that
// is not safely the user's own (safesocket.ErrUnsafe) is refused, and no
// daemon is started in its place.
func dialOrStart(ctx context.Context, cfg daemon.Config, stderr io.Writer) (net.Conn, error) {
	c, err := safesocket.Dial(ctx, cfg.Socket)
	if err == nil || errors.Is(err, safesocket.ErrUnsafe) {
		return c, err
	}
	sd, err := startDaemon(cfg)
	if err != nil {
		return nil, fmt.Errorf("start the daemon: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, startWait)
	defer cancel()
	werr := sd.wait(wctx, cfg.Socket)
	// Ready; or it exited because it lost the race to another daemon,
	// which answers: either way the socket is the judge.
	if c, err := safesocket.Dial(ctx, cfg.Socket); err == nil || errors.Is(err, safesocket.ErrUnsafe) {
		return c, err
	}
	var sf *startFailure
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.As(werr, &sf) && sf.taken:
		return dialWinner(wctx, cfg.Socket, sf)
	case errors.As(werr, &sf):
		return nil, sf // its own words
	case errors.Is(werr, errDaemonExited):
		return nil, fmt.Errorf("the daemon could not start: %s(full output in %s)", startLogTail(cfg), startLog(cfg))
	case werr != nil && wctx.Err() != nil:
		return nil, fmt.Errorf("%w on %s within %s (see %s)", errNotUp, cfg.Socket, startWait, startLog(cfg))
	}
	return nil, fmt.Errorf("%w: it said it listens on %s but does not answer (see %s): %v", errNotUp, cfg.Socket, startLog(cfg), werr)
}

// dialWinner dials the daemon that won a race to start on socket: it holds
// the socket's lock from before it binds, so a loser can hear of it before
// it listens. Nothing tells when it does, so dial with a doubling backoff
// (5 ms up to 100 ms) until it answers or ctx ends.
func dialWinner(ctx context.Context, socket string, lost *startFailure) (net.Conn, error) {
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		c, err := safesocket.Dial(ctx, socket)
		if err == nil || errors.Is(err, safesocket.ErrUnsafe) {
			return c, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %s, and it did not answer on %s (%v)", errNotUp, lost.msg, socket, err)
		case <-time.After(wait):
		}
	}
}

// startLogTail is the end of what a daemon that failed to start printed:
// its own error, for the editor, at once.
func startLogTail(cfg daemon.Config) string {
	b, err := os.ReadFile(startLog(cfg))
	if err != nil || len(b) == 0 {
		return "it printed nothing "
	}
	const max = 2 << 10
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return strings.TrimSpace(string(b)) + " "
}

// startLog holds what an auto-started daemon printed before its own log
// (hearth.log, rotated) took over.
func startLog(cfg daemon.Config) string { return filepath.Join(cfg.DataDir, "hearth.start.log") }

// autoIdleExit is how long a daemon that `hearth acp` started lives without
// clients or turns ($HEARTH_IDLE_EXIT overrides).
func autoIdleExit() string {
	if v := os.Getenv("HEARTH_IDLE_EXIT"); v != "" {
		return v
	}
	return "10m"
}

// startDaemon starts `hearth serve` through `hearth __spawn` (spawn.go):
// detached in its own session, and no descendant of this process, so
// nothing that ends this process or its tree ends it; with a way to learn
// when it is ready (ready_unix.go, ready_windows.go).
func startDaemon(cfg daemon.Config) (*startedDaemon, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(startLog(cfg), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(exe, spawnCommand, "serve", "--socket", cfg.Socket, "--idle-exit", autoIdleExit())
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = "/"
	return startReady(cmd)
}
