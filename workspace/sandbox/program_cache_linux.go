package sandbox

import (
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// programs remembers where lookProgram found each program name in PATH,
// or that it found none. Every command looks its program up, and each
// PATH directory before the program's own costs a stat; this costs a
// read of an inotify queue while nothing looked in has changed. The
// queue says what has: its watches are on the PATH directories (an event
// naming a file drops that name's lookup; one naming none, the directory
// itself gone or moved, drops them all), on the nearest existing
// ancestor of one that does not exist, and on the directory holding any
// symbolic link on the way to one (an entry made or moved there that
// could change where PATH leads drops them all and sets the watches
// again). It lives for the process: one descriptor.
var programs programCache

type programCache struct {
	mu      sync.Mutex // guards the fields below; held through a lookup, so one looks at a time
	fd      int        // the inotify descriptor, non-blocking; 0 before first use, -1 when none can be had
	pathVar string     // the PATH the lookups are for, its watches set; "" when they must be set again
	found   map[string]foundProgram
	roles   map[int32]*watchRole
}

type foundProgram struct {
	path string
	ok   bool
}

// watchRole is what an event on one watch means.
type watchRole struct {
	pathDir bool            // a PATH directory: an event naming X drops X
	names   map[string]bool // an event naming one of these (a missing directory, a link) drops everything
}

// Events that change what a lookup in a PATH directory finds, or whether
// the file found runs (mode and content); and, for the other watches,
// those that make or move an entry.
const (
	pathDirEvents = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_ATTRIB |
		unix.IN_MODIFY | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF
	entryEvents = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF
)

// look returns name's lookup in pathVar: the one remembered when nothing
// looked in has changed since, else find's, remembered.
func (c *programCache) look(name, pathVar string, find func() (string, bool)) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd == 0 {
		fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
		if err != nil {
			fd = -1
		}
		c.fd = fd
	}
	if c.fd < 0 {
		return find()
	}
	c.drain()
	if pathVar != c.pathVar {
		c.pathVar, c.found = "", nil
	}
	if f, ok := c.found[name]; ok {
		return f.path, f.ok
	}
	if c.pathVar == "" {
		// Watches first: a change made while find looks shows at the
		// next lookup.
		if !c.watch(pathVar) {
			return find()
		}
		c.pathVar, c.found = pathVar, map[string]foundProgram{}
	}
	p, ok := find()
	c.found[name] = foundProgram{p, ok}
	return p, ok
}

// drain reads the queued events and drops what they make stale.
func (c *programCache) drain() {
	var buf [4096]byte
	for {
		n, err := unix.Read(c.fd, buf[:])
		if n <= 0 || err != nil {
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
			off += unix.SizeofInotifyEvent + int(ev.Len)
			switch role := c.roles[ev.Wd]; {
			case ev.Mask&unix.IN_Q_OVERFLOW != 0:
				c.pathVar, c.found = "", nil // events lost: the watches are set again at the next miss
			case role == nil:
				// A watch no longer used (its removal's IN_IGNORED).
			case name == "", ev.Mask&unix.IN_IGNORED != 0, role.names[name]:
				c.pathVar, c.found = "", nil
			case role.pathDir:
				delete(c.found, name)
			}
		}
	}
}

// watch sets the watches for pathVar's directories; false when one
// cannot be set (the user's watch limit): nothing is remembered then.
func (c *programCache) watch(pathVar string) bool {
	old := c.roles
	c.roles = map[int32]*watchRole{}
	defer func() {
		for wd := range old {
			if c.roles[wd] == nil {
				unix.InotifyRmWatch(c.fd, uint32(wd))
			}
		}
	}()
	add := func(dir string, mask uint32) *watchRole {
		wd, err := unix.InotifyAddWatch(c.fd, dir, mask|unix.IN_MASK_ADD)
		if err == unix.ENOSPC { // the user's watch limit: look every time
			unix.Close(c.fd)
			c.fd = -1
		}
		if err != nil {
			return nil
		}
		r := c.roles[int32(wd)]
		if r == nil {
			r = &watchRole{names: map[string]bool{}}
			c.roles[int32(wd)] = r
		}
		return r
	}
	for _, d := range strings.Split(pathVar, ":") {
		if !filepath.IsAbs(d) {
			continue // lookProgram finds nothing in such a PATH
		}
		d = filepath.Clean(d)
		// The nearest existing ancestor, watched for the next missing step.
		p, missing := d, ""
		var st unix.Stat_t
		for unix.Stat(p, &st) != nil && p != "/" {
			p, missing = filepath.Dir(p), filepath.Base(p)
		}
		if missing == "" {
			r := add(p, pathDirEvents)
			if r == nil {
				return false
			}
			r.pathDir = true
		} else {
			r := add(p, entryEvents)
			if r == nil {
				return false
			}
			r.names[missing] = true
		}
		// Every link on the way: where it leads may change.
		for a := p; a != "/"; a = filepath.Dir(a) {
			if unix.Lstat(a, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				r := add(filepath.Dir(a), entryEvents)
				if r == nil {
					return false
				}
				r.names[filepath.Base(a)] = true
			}
		}
	}
	return true
}
