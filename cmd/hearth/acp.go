package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
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
func dialOrStart(ctx context.Context, cfg daemon.Config, stderr io.Writer) (net.Conn, error) {
	if c, err := net.Dial("unix", cfg.Socket); err == nil {
		return c, nil
	}
	if err := startDaemon(cfg); err != nil {
		return nil, fmt.Errorf("start the daemon: %w", err)
	}
	deadline := time.Now().Add(15 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		c, err := net.Dial("unix", cfg.Socket)
		if err == nil {
			return c, nil
		}
		last = err
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond): // polling a process we do not own
		}
	}
	return nil, fmt.Errorf("daemon did not come up on %s (see %s): %w", cfg.Socket, startLog(cfg), last)
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

func startDaemon(cfg daemon.Config) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return err
	}
	logf, err := os.OpenFile(startLog(cfg), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(exe, "serve", "--socket", cfg.Socket, "--idle-exit", autoIdleExit())
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = "/"
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}
