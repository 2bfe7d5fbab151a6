package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"

	"github.com/coder/acp-go-sdk"
	"github.com/hearthd/hearth/daemon"
	"github.com/hearthd/hearth/rpc"
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

// daemonClient is an initialized client of the running daemon, or of one
// run in this process (for command) when none answers; stop closes it and
// ends that daemon. An unsafe socket is an error: it is not gone around.
// For the commands that run no tool (compact, undo): the in-process daemon
// has no sandbox configured.
func daemonClient(ctx context.Context, cfg daemon.Config, command string) (client *rpc.Client, stop func(), err error) {
	client, err = connect(ctx, cfg)
	if err == nil {
		return client, func() { client.Close() }, nil
	}
	var ee *exitError
	if !errors.As(err, &ee) {
		return nil, nil, err
	}
	c, end, err := daemonInProcess(cfg, command)
	if err != nil {
		return nil, nil, err
	}
	client = rpc.NewClient(c, rpc.ClientOptions{})
	if err := client.Call(ctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}, nil); err != nil {
		client.Close()
		end()
		return nil, nil, fmt.Errorf("initialize: %w", err)
	}
	return client, func() { client.Close(); end() }, nil
}
