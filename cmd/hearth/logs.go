package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// logPoll is how often `hearth logs -f` looks for new lines: a user-facing
// follow loop, like tail -f's.
const logPoll = 200 * time.Millisecond

func runLogs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("logs", stderr)
	follow := fs.Bool("f", false, "follow: keep printing lines as the daemon writes them, across log rotation, until interrupted")
	if err := fs.Parse(args); err != nil {
		return &exitError{2, err}
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	path := filepath.Join(cfg.DataDir, "hearth.log")
	f, err := os.Open(path)
	if err != nil && (!*follow || !errors.Is(err, os.ErrNotExist)) {
		return fmt.Errorf("no daemon log at %s (%v): a daemon started by `hearth acp` logs there; under systemd use `journalctl --user -u hearth`", path, err)
	}
	if f != nil {
		defer func() { f.Close() }()
		if _, err := io.Copy(stdout, f); err != nil {
			return err
		}
	}
	if !*follow {
		return nil
	}
	return followLog(ctx, path, &f, stdout)
}

// followLog prints what is appended to path until ctx ends. When the file is
// replaced (rotation renames it to hearth.log.1 and starts a new one: the
// inode changes) or shrinks (truncated), it drains the old file and reopens
// path from the start. *f is the open file, or nil while path is missing.
func followLog(ctx context.Context, path string, f **os.File, w io.Writer) error {
	t := time.NewTicker(logPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if *f != nil {
			if _, err := io.Copy(w, *f); err != nil {
				return err
			}
		}
		info, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // mid-rotation, or not created yet
		}
		if err != nil {
			return err
		}
		if *f != nil {
			cur, err := (*f).Stat()
			if err != nil {
				return err
			}
			off, err := (*f).Seek(0, io.SeekCurrent)
			if err != nil {
				return err
			}
			if os.SameFile(cur, info) && info.Size() >= off {
				continue
			}
			// Rotated: what was written to the old file since the copy
			// above is still readable through it; print it before moving on.
			if _, err := io.Copy(w, *f); err != nil {
				return err
			}
			(*f).Close()
			*f = nil
		}
		nf, err := os.Open(path)
		if err != nil {
			continue // removed again between Stat and Open
		}
		*f = nf
		if _, err := io.Copy(w, nf); err != nil {
			return err
		}
	}
}
