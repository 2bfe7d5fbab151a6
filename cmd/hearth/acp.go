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
)

// runACP relays stdin/stdout to the daemon's socket byte for byte; the
// daemon detects the framing. It starts the daemon when nothing answers,
// the way `gopls -remote=auto` does.
func runACP(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("acp", stderr)
	if err := fs.Parse(args); err != nil {
		return &exitError{2, err}
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	conn, err := dialOrStart(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer conn.Close()
	up := make(chan error, 1)
	go func() {
		_, err := io.Copy(conn, os.Stdin)
		if uc, ok := conn.(*net.UnixConn); ok {
			uc.CloseWrite()
		}
		up <- err
	}()
	down := make(chan error, 1)
	go func() {
		_, err := io.Copy(stdout, conn)
		down <- err
	}()
	select {
	case err = <-down: // the daemon hung up
	case <-ctx.Done():
	}
	if err != nil {
		return fmt.Errorf("relay: %w", err)
	}
	return nil
}

// dialOrStart connects to the daemon, starting `hearth serve` detached in
// its own session when no daemon answers, then retrying the dial.
// A socket that is not safely the user's own (daemon.ErrUnsafeSocket) is
// refused, and no daemon is started in its place.
func dialOrStart(ctx context.Context, cfg daemon.Config, stderr io.Writer) (net.Conn, error) {
	c, err := daemon.DialSocket(ctx, cfg.Socket)
	if err == nil || errors.Is(err, daemon.ErrUnsafeSocket) {
		return c, err
	}
	exited, err := startDaemon(cfg)
	if err != nil {
		return nil, fmt.Errorf("start the daemon: %w", err)
	}
	deadline := time.Now().Add(15 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		c, err := daemon.DialSocket(ctx, cfg.Socket)
		if err == nil || errors.Is(err, daemon.ErrUnsafeSocket) {
			return c, err
		}
		last = err
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-exited:
			// It died before it listened (a daemon that lost the race to
			// another one exits too: that one answers).
			if c, err := daemon.DialSocket(ctx, cfg.Socket); err == nil || errors.Is(err, daemon.ErrUnsafeSocket) {
				return c, err
			}
			return nil, fmt.Errorf("the daemon could not start: %s(full output in %s)", startLogTail(cfg), startLog(cfg))
		case <-time.After(10 * time.Millisecond): // the socket appears without an event we could wait on
		}
	}
	return nil, fmt.Errorf("daemon did not come up on %s (see %s): %w", cfg.Socket, startLog(cfg), last)
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

// startDaemon starts `hearth serve` detached in its own session. The
// returned channel is closed when that process exits; the goroutine that
// waits for it (and reaps it) lives as long as this `hearth acp`.
func startDaemon(cfg daemon.Config) (<-chan struct{}, error) {
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
	cmd := exec.Command(exe, "serve", "--socket", cfg.Socket, "--idle-exit", autoIdleExit())
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = "/"
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	return exited, nil
}
