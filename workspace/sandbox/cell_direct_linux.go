//go:build linux && cgo

package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// A handed spare's go from the daemon itself. The server checks two
// things before a command runs: that every unix socket bound on the host
// since its last look is covered, and that the spare's rules are current
// (rulesStampOf). When it hands a spare over it looks once more and hands the
// daemon what it saw (spareCheck) and a copy of the spare's go socket. At
// the command the daemon looks itself: the host's socket table it reads
// is the one the server reads (the daemon's network namespace), and it
// takes the stamp through the cell's root, so that each path resolves in
// the cell's mounts as the server's own stat does. Only when both are
// unchanged does it send the go itself; else the server checks as before
// (startHanded), covering the new sockets or dropping the spare. The
// server's wake, its checks and its answer are off the command's way.

// spareCheck is what the server saw when it handed a spare over: the
// host's socket table, every socket in it covered or exempt (its SHA-256),
// and the stamp its rules were built under, with the paths that stamp is
// taken from. A plain value, carried in the handing reply.
type spareCheck struct {
	Table string   `json:"table"`
	Stamp string   `json:"stamp"`
	Split []string `json:"split"`
	Write []string `json:"write"`
}

// hostTable reads the host's unix socket table (/proc/PID/net/unix of the
// daemon) whole, into a buffer it keeps. One per reader; not safe for
// concurrent use.
type hostTable struct {
	f   *os.File
	buf []byte
}

// read reads the whole table into buf, from its start.
func (t *hostTable) read() ([]byte, error) {
	if t.buf == nil {
		t.buf = make([]byte, 16<<10)
	}
	fd, n := int(t.f.Fd()), 0
	for {
		if n == len(t.buf) {
			t.buf = append(t.buf, make([]byte, len(t.buf))...)
		}
		m, err := unix.Pread(fd, t.buf[n:], int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			return t.buf[:n], nil
		}
		n += m
	}
}

// tableSum is the SHA-256 of the rows of a host socket table a command
// could reach: each with a path (its inode and path), but a connected
// one's (a connection accepted from a listener shows the listener's path;
// no socket in that state takes a connection or a datagram from another).
// The connections that come and go, the reference counts and the sockets
// with no path leave it as it is; any socket bound since changes it.
func tableSum(table []byte) string {
	h := sha256.New()
	rows := bytes.Split(table, []byte("\n"))
	for _, row := range rows[min(1, len(rows)):] { // after the header
		f := bytes.Fields(row)
		if len(f) < 8 || f[7][0] != '/' || string(f[5]) == "03" {
			continue
		}
		h.Write(f[6])
		h.Write([]byte{' '})
		h.Write(bytes.Join(f[7:], []byte{' '}))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// spareCheck is what lets the daemon give sp its go itself: nil when a
// socket bound since could not be covered or sp's rules are not the
// current ones.
func (s *cellServer) spareCheck(sp *spareCall) *spareCheck {
	if s.refreshSockets() != nil {
		return nil
	}
	c := &s.sockets
	c.mu.Lock()
	table := tableSum(c.last) // covered: a later refresh only covers more
	c.mu.Unlock()
	s.rmu.Lock()
	defer s.rmu.Unlock()
	if s.stamp == "" || s.gen != sp.gen {
		return nil
	}
	return &spareCheck{Table: table, Stamp: s.stamp, Split: slices.Clone(s.split), Write: slices.Clone(s.policy.write)}
}

// cellView is how the daemon sees what a cell's server checks: the host's
// socket table and the cell's root (/proc/PID/root of the server, opened
// as a path). Opened at the first handed spare with a check; ok false
// when either cannot be (the daemon then asks the server each time).
// Lives as long as its cell; mu serialises its users.
type cellView struct {
	mu    sync.Mutex
	once  sync.Once
	ok    bool
	root  int
	table hostTable
}

func (v *cellView) open(pid int) {
	root, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	f, err := os.Open("/proc/" + strconv.Itoa(os.Getpid()) + "/net/unix")
	if err != nil {
		unix.Close(root)
		return
	}
	v.root, v.table.f, v.ok = root, f, true
}

func (v *cellView) close() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.once.Do(func() {}) // not opened after this
	if v.ok {
		unix.Close(v.root)
		v.table.f.Close()
		v.ok = false
	}
}

// fresh reports whether what the server saw when it handed the spare
// over (ch) still holds: the same socket table, the same stamp.
func (v *cellView) fresh(pid int, ch *spareCheck) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.once.Do(func() { v.open(pid) })
	if !v.ok {
		return false
	}
	table, err := v.table.read()
	if err != nil || tableSum(table) != ch.Table {
		return false
	}
	return rulesStampOf(ch.Split, ch.Write, v.stat) == ch.Stamp
}

// stat is stat(2) of path as the cell's server sees it: resolved from the
// cell's root, its absolute links too, through the cell's mounts.
func (v *cellView) stat(path string, st *unix.Stat_t) error {
	rel := strings.TrimLeft(path, "/")
	if rel == "" {
		rel = "." // the root itself
	}
	fd, err := unix.Openat2(v.root, rel, &unix.OpenHow{
		Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fstat(fd, st)
}
