package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"syscall"

	"github.com/hearthd/hearth/daemon"
)

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func loadConfig() (daemon.Config, error) {
	cfg, err := daemon.FromEnv()
	cfg.Version = version
	return cfg, err
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	socket := fs.String("socket", "", "unix socket path (default $HEARTH_SOCKET, else the per-user runtime dir)")
	stdio := fs.Bool("stdio", false, "serve one client on stdin/stdout instead of the socket")
	if err := fs.Parse(args); err != nil {
		return &exitError{2, err}
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	if *socket != "" {
		cfg.Socket = *socket
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	d, err := daemon.New(cfg, log)
	if err != nil {
		return err
	}
	defer d.Close()

	if *stdio {
		// Non-blocking stdin so closing it ends a pending read at shutdown.
		syscall.SetNonblock(0, true)
		done := make(chan struct{})
		go func() {
			defer close(done)
			d.ServeConn(stdioConn{os.Stdin, os.Stdout})
		}()
		select {
		case <-done:
		case <-ctx.Done():
		}
		return nil
	}

	ln, err := daemon.Listen(cfg.Socket)
	if err != nil {
		return err
	}
	log.Info("hearth listening", "socket", cfg.Socket, "data", cfg.DataDir, "simulator", cfg.Simulator, "version", version)
	errc := make(chan error, 1)
	go func() { errc <- d.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		log.Info("shutting down")
		d.Close()
		<-errc
		return nil
	}
}

// stdioConn joins stdin and stdout into one connection.
type stdioConn struct {
	r *os.File
	w *os.File
}

func (c stdioConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c stdioConn) Write(p []byte) (int, error) { return c.w.Write(p) }
func (c stdioConn) Close() error {
	err := c.r.Close()
	if werr := c.w.Close(); err == nil {
		err = werr
	}
	return err
}

var _ = fmt.Sprintf
