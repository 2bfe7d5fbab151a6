package safesocket

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// DataDirLockName is the lock file in the data directory (0600). The daemon
// that uses the directory holds an flock on it from before the database
// opens until Close, and writes into it its pid and the socket it serves, so
// that a second daemon can say which one to stop.
const DataDirLockName = "daemon.lock"

// ErrDataDirInUse is wrapped by LockDataDir's error (so by daemon.New's)
// when another daemon (or a command running one in its process) holds the
// data directory: two daemons on one database would each take its sessions
// for their own.
var ErrDataDirInUse = errors.New("the data directory is in use")

// closingWait bounds how long a daemon waits for one that holds the data
// directory and said it is shutting down: its drain (10 s by default) and a
// margin, as `hearth stop` waits.
const closingWait = 20 * time.Second

// DataDirLock is the held lock of a data directory, from LockDataDir until
// Release (the daemon's Close, after its database closed). The process's exit
// releases it too, however it ends.
type DataDirLock struct {
	f      *os.File
	record string // what LockDataDir wrote: pid, socket or command
}

// LockDataDir takes dir's lock, creating the directory 0700 when missing,
// and records who holds it: this process, serving the socket at socket or,
// when socket is "", running as command. Held by another process: an error
// wrapping ErrDataDirInUse that names that process — unless its record says
// it is shutting down (closing), when it waits for it to let go, for at
// most closingWait.
func LockDataDir(dir, socket, command string) (*DataDirLock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	path := filepath.Join(dir, DataDirLockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data directory lock: %w", err)
	}
	held, err := flockNB(f)
	if err == nil && !held {
		held, err = waitClosing(f)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("data directory lock %s: %w", path, err)
	}
	if !held {
		rec := readRecord(f)
		f.Close()
		return nil, inUseError(dir, rec)
	}
	record := fmt.Sprintf("pid=%d\nsocket=%s\n", os.Getpid(), socket)
	if socket == "" {
		record = fmt.Sprintf("pid=%d\ncommand=%s\n", os.Getpid(), command)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(record), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("data directory lock %s: %w", path, err)
	}
	return &DataDirLock{f: f, record: record}, nil
}

// waitClosing takes f's lock once its holder, which said it is shutting
// down, has let go: a doubling wait from 1 to 100 ms between tries (flock
// has no wait with a bound), at most closingWait. False at once when the
// holder is not closing, or when another has taken the lock meanwhile.
func waitClosing(f *os.File) (bool, error) {
	deadline := time.Now().Add(closingWait)
	for wait := time.Millisecond; time.Now().Before(deadline); wait = min(2*wait, 100*time.Millisecond) {
		if !strings.Contains(readRecord(f), "\nstate=closing\n") {
			return false, nil
		}
		time.Sleep(wait)
		if held, err := flockNB(f); held || err != nil {
			return held, err
		}
	}
	return false, nil
}

// readRecord is the lock file's record, as its holder last wrote it.
func readRecord(f *os.File) string {
	b := make([]byte, 4<<10)
	n, _ := f.ReadAt(b, 0)
	return string(b[:n])
}

// Closing marks the record: the holder is shutting down, so that a daemon
// started now waits for it rather than being refused (the daemon's
// Shutdown and Close call it first).
func (l *DataDirLock) Closing() {
	if l != nil {
		l.f.WriteAt([]byte(l.record+"state=closing\n"), 0)
	}
}

func (l *DataDirLock) Release() {
	if l != nil {
		l.f.Close()
	}
}

// inUseError says which process holds dir (from its lock's record) and
// what to do.
func inUseError(dir, record string) error {
	kv := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(record))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			kv[k] = v
		}
	}
	const other = "or set HEARTH_DATA_DIR to another directory"
	switch pid, sock, cmd := kv["pid"], kv["socket"], kv["command"]; {
	case pid != "" && sock != "":
		return inUse(fmt.Sprintf("another hearth daemon (pid %s, socket %s) uses the data directory %s; use it (set HEARTH_SOCKET=%s), stop it (HEARTH_SOCKET=%s hearth stop), %s",
			pid, sock, dir, sock, sock, other))
	case pid != "" && cmd != "":
		return inUse(fmt.Sprintf("another hearth process (pid %s, %s) uses the data directory %s; wait for it to end, %s",
			pid, cmd, dir, other))
	}
	return inUse(fmt.Sprintf("another hearth daemon holds %s; stop it (hearth stop), %s", filepath.Join(dir, DataDirLockName), other))
}

// inUse is LockDataDir's error for a data directory another process holds: its
// message says which and what to do; errors.Is finds ErrDataDirInUse.
type inUse string

func (e inUse) Error() string        { return string(e) }
func (e inUse) Is(target error) bool { return target == ErrDataDirInUse }
