//go:build linux

package watch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"
)

// errHubClosed is what a Watcher meets subscribing to a closed Hub.
var errHubClosed = errors.New("workspace: the shared file watcher is closed")

// inotifyMask is what every watch asks for: fsnotify's events, on
// directories only, never through a symlink swapped in for one. One mask for
// all, so a second registration of a directory changes nothing.
const inotifyMask = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM | unix.IN_DELETE |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_MODIFY | unix.IN_ATTRIB |
	unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

// Hub shares one inotify instance among the Watchers of a process, so
// the number of open workspaces is not bounded by
// fs.inotify.max_user_instances (128 by default, for all of a user's
// programs together). Created by NewHub (the daemon's New) and handed
// to each Watcher in Options.Hub; its instance is opened by the first
// Watcher that subscribes, and again after one failed. One reader goroutine
// per instance drains it and routes each event, by watch descriptor, to the
// Watchers that registered that directory, each under its own path: nested
// workspaces, and a directory moved while two workspaces watch it, each
// hear their own. Close (the daemon's Close, after its Watchers') ends the
// reader and waits for it. Off Linux a hub gives each Watcher its own
// fsnotify watcher. Safe for concurrent use.
type Hub struct {
	log *slog.Logger
	wg  sync.WaitGroup // the instances' reader goroutines

	mu     sync.Mutex // guards the fields below, and every instance's and subscription's registrations
	closed bool
	inst   *inotifyInstance // nil until a Watcher subscribes, and after the instance failed
}

// inotifyInstance is one inotify descriptor and what is registered on it.
// Its maps are guarded by the hub's mu; it lives until the hub closes or
// its reader fails.
type inotifyInstance struct {
	file    *os.File            // reads go through the runtime's poller; Close ends one
	fd      int                 // file's descriptor (File.Fd would make it blocking); used only while registered subscriptions exist, under the hub's mu
	watches map[int32]*hubWatch // watch descriptor → who registered it
	subs    map[*hubSub]struct{}
}

// hubWatch is one inotify watch (one directory) and the registrations that
// hold it: a subscription and the path it registered the directory under.
// A directory moved while two workspaces watch it is registered under its
// old path by one and its new path by the other until both have caught up.
type hubWatch struct {
	regs []hubReg
}

type hubReg struct {
	sub  *hubSub
	path string
}

// NewHub returns a hub with no inotify instance yet.
func NewHub(log *slog.Logger) *Hub {
	if log == nil {
		log = slog.Default()
	}
	return &Hub{log: log}
}

// Close ends the hub's instance and waits for its reader. The Watchers
// still subscribed see their events end and scan instead. Safe to call
// more than once.
func (h *Hub) Close() error {
	h.mu.Lock()
	h.closed = true
	inst := h.inst
	h.inst = nil
	if inst != nil {
		h.endSubs(inst)
	}
	h.mu.Unlock()
	if inst != nil {
		inst.file.Close()
	}
	h.wg.Wait()
	return nil
}

// Instances returns how many inotify instances the hub holds: 0 or 1.
func (h *Hub) Instances() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.inst == nil {
		return 0
	}
	return 1
}

// subscribe is a Watcher's newSource: a view of the hub's instance that
// sees only the directories the Watcher adds.
func (h *Hub) subscribe() (eventSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errHubClosed
	}
	if h.inst == nil {
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
		if err != nil {
			return nil, fmt.Errorf("couldn't initialize inotify: %w", err)
		}
		// Non-blocking, so the runtime's poller reads it and Close ends a read.
		h.inst = &inotifyInstance{file: os.NewFile(uintptr(fd), "inotify"), fd: fd, watches: map[int32]*hubWatch{}, subs: map[*hubSub]struct{}{}}
		h.wg.Add(1)
		go h.read(h.inst)
	}
	s := newHubSub(h, h.inst)
	h.inst.subs[s] = struct{}{}
	return s, nil
}

// add registers path for s: inotify gives the directory's existing watch
// if anyone watches it already (under any path).
func (h *Hub) add(s *hubSub, path string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	inst := s.inst
	if inst == nil {
		return fmt.Errorf("workspace: watch %s: %w", path, errHubClosed)
	}
	wd, err := unix.InotifyAddWatch(inst.fd, path, inotifyMask)
	if err != nil {
		return &os.PathError{Op: "inotify_add_watch", Path: path, Err: err}
	}
	if old, ok := s.paths[path]; ok {
		if old == int32(wd) {
			return nil
		}
		h.unregister(inst, s, path, old) // the path names another directory now
	}
	s.paths[path] = int32(wd)
	w := inst.watches[int32(wd)]
	if w == nil {
		w = &hubWatch{}
		inst.watches[int32(wd)] = w
	}
	w.regs = append(w.regs, hubReg{sub: s, path: path})
	return nil
}

// remove drops s's registration of path; the watch goes once no one holds it.
func (h *Hub) remove(s *hubSub, path string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	wd, ok := s.paths[path]
	if !ok || s.inst == nil {
		return nil // never added, or its directory is gone and the kernel dropped it
	}
	delete(s.paths, path)
	h.unregister(s.inst, s, path, wd)
	return nil
}

// leave drops every registration of s. Called with h.mu held.
func (h *Hub) leave(s *hubSub) {
	if s.inst == nil {
		return
	}
	for path, wd := range s.paths {
		h.unregister(s.inst, s, path, wd)
	}
	clear(s.paths)
	delete(s.inst.subs, s)
	s.inst = nil
}

// unregister removes the registration (s, path) of wd, and the watch with
// its last one. Called with h.mu held.
func (h *Hub) unregister(inst *inotifyInstance, s *hubSub, path string, wd int32) {
	w := inst.watches[wd]
	if w == nil {
		return
	}
	for i, r := range w.regs {
		if r.sub == s && r.path == path {
			w.regs = append(w.regs[:i], w.regs[i+1:]...)
			break
		}
	}
	if len(w.regs) == 0 {
		delete(inst.watches, wd)
		// EINVAL: the kernel dropped it already (the directory is gone).
		_, _ = unix.InotifyRmWatch(inst.fd, uint32(wd))
	}
}

// endSubs tells every subscription of inst that its events end. Called
// with h.mu held.
func (h *Hub) endSubs(inst *inotifyInstance) {
	for s := range inst.subs {
		clear(s.paths)
		s.inst = nil
		s.end()
	}
	clear(inst.subs)
	clear(inst.watches)
}

// read drains inst until it is closed. A read error ends the instance: its
// Watchers see their events end, scan instead, and subscribe again later,
// which opens a new instance.
func (h *Hub) read(inst *inotifyInstance) {
	defer h.wg.Done()
	buf := make([]byte, 64<<10) // room for a few thousand events a read
	for {
		n, err := inst.file.Read(buf)
		if err != nil {
			if !errors.Is(err, os.ErrClosed) {
				h.log.Error("workspace: the shared inotify instance failed; its workspaces scan for changes until it is reopened", "err", err)
				h.mu.Lock()
				if h.inst == inst {
					h.inst = nil
				}
				h.endSubs(inst)
				h.mu.Unlock()
				inst.file.Close()
			}
			return
		}
		h.route(inst, buf[:n])
	}
}

// route hands each event of one read to the registrations of its watch.
func (h *Hub) route(inst *inotifyInstance, buf []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for len(buf) >= unix.SizeofInotifyEvent {
		wd := int32(binary.NativeEndian.Uint32(buf[0:4]))
		mask := binary.NativeEndian.Uint32(buf[4:8])
		nameLen := int(binary.NativeEndian.Uint32(buf[12:16]))
		end := min(unix.SizeofInotifyEvent+nameLen, len(buf))
		name := cString(buf[unix.SizeofInotifyEvent:end])
		buf = buf[end:]
		if mask&unix.IN_Q_OVERFLOW != 0 {
			for s := range inst.subs {
				s.push(hubItem{err: fsnotify.ErrEventOverflow}) // every workspace rescans
			}
			continue
		}
		w := inst.watches[wd]
		if w == nil {
			continue // removed meanwhile
		}
		if mask&unix.IN_IGNORED != 0 {
			// The kernel dropped the watch: its directory is gone.
			for _, r := range w.regs {
				if r.sub.paths[r.path] == wd {
					delete(r.sub.paths, r.path)
				}
			}
			delete(inst.watches, wd)
			continue
		}
		op := inotifyOp(mask)
		if op == 0 {
			continue
		}
		for _, r := range w.regs {
			p := r.path
			if name != "" {
				p += string(os.PathSeparator) + name
			}
			r.sub.push(hubItem{ev: fsnotify.Event{Name: p, Op: op}})
		}
	}
}

// inotifyOp translates an inotify mask as fsnotify does.
func inotifyOp(mask uint32) fsnotify.Op {
	var op fsnotify.Op
	if mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 {
		op |= fsnotify.Create
	}
	if mask&(unix.IN_DELETE|unix.IN_DELETE_SELF) != 0 {
		op |= fsnotify.Remove
	}
	if mask&unix.IN_MODIFY != 0 {
		op |= fsnotify.Write
	}
	if mask&(unix.IN_MOVED_FROM|unix.IN_MOVE_SELF) != 0 {
		op |= fsnotify.Rename
	}
	if mask&unix.IN_ATTRIB != 0 {
		op |= fsnotify.Chmod
	}
	return op
}

// cString is b up to its first NUL (inotify pads names with NULs).
func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
