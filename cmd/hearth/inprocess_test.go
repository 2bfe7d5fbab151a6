package main

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/hearthd/hearth/daemon"
	"github.com/hearthd/hearth/safesocket"
)

// inProcess is a daemon run in this test process (serveInProcess).
type inProcess struct {
	d *daemon.Daemon
	// gone receives once per client connection the daemon has finished
	// with (removed from its clients): its "client disconnected" record.
	gone chan struct{}
}

// serveInProcess runs a daemon in this test process on the socket the
// environment names (isolate sets it), with the configuration the CLI would
// load; it is closed when the test ends. Without OPENAI_* it answers from
// the built-in simulator, as serve's does.
func serveInProcess(t *testing.T) *inProcess {
	t.Helper()
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	var simulator builtinSim
	t.Cleanup(simulator.Close) // after the daemon's Close (cleanups run last first)
	if err := simulator.point(&cfg, nil); err != nil {
		t.Fatal(err)
	}
	p := &inProcess{gone: make(chan struct{}, 64)}
	d, err := daemon.New(cfg, slog.New(disconnects{p.gone}))
	if err != nil {
		t.Fatal(err)
	}
	p.d = d
	ln, err := safesocket.Listen(cfg.Socket)
	if err != nil {
		d.Close()
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- d.Serve(ln) }()
	t.Cleanup(func() {
		d.Close()
		<-served
	})
	return p
}

// waitGone waits for the daemon to finish with one more client connection.
func (p *inProcess) waitGone(t *testing.T) {
	t.Helper()
	select {
	case <-p.gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the daemon did not see a client leave")
	}
}

// disconnects is a log handler that reports the daemon's "client
// disconnected" records on a channel and drops every record.
type disconnects struct{ ch chan<- struct{} }

func (h disconnects) Enabled(context.Context, slog.Level) bool { return true }
func (h disconnects) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h disconnects) WithGroup(string) slog.Handler            { return h }
func (h disconnects) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "client disconnected" {
		select {
		case h.ch <- struct{}{}:
		default:
		}
	}
	return nil
}
