package main

import (
	"testing"

	"github.com/hearthd/hearth/daemon"
)

// serveInProcess runs a daemon in this test process on the socket the
// environment names (isolate sets it), with the configuration the CLI would
// load; it is closed when the test ends. Without OPENAI_* it answers from
// its built-in simulator.
func serveInProcess(t *testing.T) *daemon.Daemon {
	t.Helper()
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	d, err := daemon.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := daemon.Listen(cfg.Socket)
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
	return d
}
