package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/hearthd/hearth/rpc"
)

// stopWait bounds how long `hearth stop` waits for a daemon to exit: its
// drain (10 s by default) and a margin.
const stopWait = 20 * time.Second

// runStop stops the installed service when it runs; otherwise it stops
// whatever daemon owns the socket (one started by `hearth serve` or by
// `hearth acp`): SIGTERM to the pid the daemon reports, then it waits for
// the daemon to hang up.
func runStop(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("stop", stderr)
	if err := fs.Parse(args); err != nil {
		return &exitError{2, err}
	}
	installed := false
	if p, err := servicePlan(); err == nil {
		_, err := os.Stat(p.Unit.Path)
		installed = err == nil
	}
	m, _, merr := manager(ctx)
	if merr == nil {
		if state, err := m.State(ctx); err == nil && state == "running" {
			return stopService(ctx, nil, stdout, stderr)
		}
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	client, err := connect(cctx, cfg)
	if err != nil {
		if installed {
			// Installed, not running, no daemon on the socket: the service
			// manager says what it knows (or why it cannot be asked).
			return stopService(ctx, nil, stdout, stderr)
		}
		var ee *exitError
		if errors.As(err, &ee) && ee.code == 3 {
			// Nothing to stop is what stop is for: a second stop, or a
			// script's, succeeds as systemctl's does.
			fmt.Fprintf(stdout, "hearth: the daemon is not running on %s; nothing to stop\n", cfg.Socket)
			return nil
		}
		return err
	}
	defer client.Close()
	var st rpc.Status
	if err := client.Call(cctx, rpc.MethodHearthStatus, nil, &st); err != nil {
		return fmt.Errorf("ask the daemon for its pid: %w", err)
	}
	p, err := os.FindProcess(st.PID)
	if err != nil {
		return fmt.Errorf("daemon pid %d: %w", st.PID, err)
	}
	if err := terminate(p); err != nil {
		return fmt.Errorf("stop the daemon (pid %d): %w", st.PID, err)
	}
	// The daemon closes every client as it shuts down: this connection's
	// end is the sign it is gone.
	select {
	case <-client.Done():
	case <-time.After(stopWait):
		return fmt.Errorf("the daemon (pid %d) did not exit within %s; see `hearth logs`", st.PID, stopWait)
	case <-ctx.Done():
		return ctx.Err()
	}
	fmt.Fprintf(stdout, "hearth: stopped the daemon (pid %d) on %s\n", st.PID, cfg.Socket)
	return nil
}
