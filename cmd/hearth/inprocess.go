package main

import (
	"io"
	"log/slog"
	"net"

	"github.com/hearthd/hearth/daemon"
)

// daemonInProcess runs a daemon in this process, for a command that must
// not leave one running (ask --no-daemon, compact with no daemon), with the
// built-in simulator in simulator mode, and returns the client end of a
// pipe to it; stop closes the daemon, which waits for the pipe's serving
// goroutine, then the simulator. command names it in the data directory's
// lock, for a daemon refused beside it.
func daemonInProcess(cfg daemon.Config, command string) (conn io.ReadWriteCloser, stop func(), err error) {
	cfg.NoSocket = command
	simulator := &builtinSim{}
	if err := simulator.point(&cfg, nil); err != nil {
		return nil, nil, err
	}
	d, err := daemon.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		simulator.Close()
		return nil, nil, err
	}
	a, b := net.Pipe()
	go d.ServeConn(b) // ends when a closes, or at d.Close, which waits for it
	return a, func() {
		d.Close()
		simulator.Close()
	}, nil
}
