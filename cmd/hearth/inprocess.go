package main

import (
	"io"
	"log/slog"
	"net"

	"github.com/hearthd/hearth/daemon"
)

// daemonInProcess runs a daemon in this process, for a command that must
// not leave one running (ask --no-daemon, compact with no daemon), and
// returns the client end of a pipe to it; stop closes the daemon, which
// waits for the pipe's serving goroutine. command names it in the data
// directory's lock, for a daemon refused beside it.
func daemonInProcess(cfg daemon.Config, command string) (conn io.ReadWriteCloser, stop func(), err error) {
	cfg.NoSocket = command
	d, err := daemon.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, nil, err
	}
	a, b := net.Pipe()
	go d.ServeConn(b) // ends when a closes, or at d.Close, which waits for it
	return a, func() { d.Close() }, nil
}
