package main

import (
	"fmt"
	"log/slog"

	"github.com/hearthd/hearth/daemon"
	"github.com/hearthd/hearth/session/sim"
)

// builtinSim is the built-in Responses simulator a command runs for the
// daemon it starts in this process when no API key and no OPENAI_BASE_URL
// are set (daemon.Config.Simulator): serve's daemon, and the in-process one
// of ask --no-daemon and compact. It starts on first need (point), so a
// daemon reloaded into simulator mode gets one too, and lives until Close,
// which the command calls after the daemon's Close. Used by one goroutine.
type builtinSim struct {
	srv  *sim.Server // nil until point starts it
	base string
}

// point gives a configuration in simulator mode the simulator's base URL,
// starting the simulator the first time (logged on log, if not nil). A
// configuration with a key or a base URL of its own is left as it is.
func (b *builtinSim) point(cfg *daemon.Config, log *slog.Logger) error {
	if !cfg.Simulator {
		return nil
	}
	if b.srv == nil {
		srv := sim.New(sim.Options{Hint: sim.NoKeyHint}) // an echo says what a newcomer can try
		base, err := srv.Start()
		if err != nil {
			return fmt.Errorf("start simulator: %w", err)
		}
		b.srv, b.base = srv, base
		if log != nil {
			log.Info("no OPENAI_API_KEY: using the built-in Responses simulator", "base", base)
		}
	}
	cfg.BaseURL = b.base
	return nil
}

// Close stops the simulator if point started it.
func (b *builtinSim) Close() {
	if b.srv != nil {
		b.srv.Close()
	}
}
