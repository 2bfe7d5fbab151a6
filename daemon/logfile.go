package daemon

import (
	"fmt"
	"os"
	"sync"
)

// LogFile is the daemon's size-capped log: hearth.log in the data dir,
// rotated to hearth.log.1 when it passes its cap (one old file is kept).
// Created by OpenLogFile at start; Close at exit. Safe for concurrent use.
type LogFile struct {
	path string
	max  int64

	mu   sync.Mutex // guards f and size
	f    *os.File
	size int64
}

// DefaultLogMax caps hearth.log before it rotates.
const DefaultLogMax = 10 << 20

// OpenLogFile opens (appending, 0600) the log at path.
func OpenLogFile(path string, max int64) (*LogFile, error) {
	l := &LogFile{path: path, max: max}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *LogFile) open() error {
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("log file: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("log file: %w", err)
	}
	l.f, l.size = f, fi.Size()
	return nil
}

// Write appends p, rotating first when p would pass the cap.
func (l *LogFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return 0, os.ErrClosed
	}
	if l.size > 0 && l.size+int64(len(p)) > l.max {
		l.f.Close()
		l.f = nil
		if err := os.Rename(l.path, l.path+".1"); err != nil && !os.IsNotExist(err) {
			return 0, fmt.Errorf("rotate log: %w", err)
		}
		if err := l.open(); err != nil {
			return 0, err
		}
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	return n, err
}

// Close closes the file.
func (l *LogFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
