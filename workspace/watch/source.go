package watch

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/fsnotify/fsnotify"
)

// eventSource is where a Watcher's filesystem events come from: fsnotify in
// production; tests wrap it to inject errors (an overflow, a watch limit).
// Owned by the Watcher's loop, which closes it.
type eventSource interface {
	Add(path string) error
	Remove(path string) error
	Events() <-chan fsnotify.Event
	Errors() <-chan error
	Close() error // stops the source's goroutine and waits for it
}

// fsnotifySource adapts *fsnotify.Watcher to eventSource.
type fsnotifySource struct{ w *fsnotify.Watcher }

func newFsnotifySource() (eventSource, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	return fsnotifySource{w}, nil
}

func (s fsnotifySource) Add(path string) error         { return s.w.Add(path) }
func (s fsnotifySource) Remove(path string) error      { return s.w.Remove(path) }
func (s fsnotifySource) Events() <-chan fsnotify.Event { return s.w.Events }
func (s fsnotifySource) Errors() <-chan error          { return s.w.Errors }
func (s fsnotifySource) Close() error                  { return s.w.Close() }

// isWatchLimit reports whether err is the kernel refusing another inotify
// watch (ENOSPC) or instance (EMFILE): a limit the user can raise, which
// puts the Watcher in polling mode meanwhile.
func isWatchLimit(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE)
}

// limitProblem is the message Problem returns once a watch limit made the
// Watcher fall back to polling: what happened, and the sysctl that fixes it.
func limitProblem(root string, err error, dirs int, every string) string {
	if errors.Is(err, syscall.EMFILE) {
		return fmt.Sprintf("cannot watch %s for changes: too many inotify instances are open "+
			"(fs.inotify.max_user_instances = %s); scanning for changes every %s instead. "+
			"To fix it, run `sudo sysctl fs.inotify.max_user_instances=1024` "+
			"(and add fs.inotify.max_user_instances=1024 to /etc/sysctl.d/90-inotify.conf to keep it); "+
			"hearth retries on its own",
			root, procValue("max_user_instances"), every)
	}
	return fmt.Sprintf("cannot watch %s for changes: the inotify watch limit is reached "+
		"(fs.inotify.max_user_watches = %s, this workspace has %d directories); scanning for changes every %s instead. "+
		"To fix it, run `sudo sysctl fs.inotify.max_user_watches=524288` "+
		"(and add fs.inotify.max_user_watches=524288 to /etc/sysctl.d/90-inotify.conf to keep it); "+
		"hearth retries on its own",
		root, procValue("max_user_watches"), dirs, every)
}

// procValue reads one of /proc/sys/fs/inotify's limits, for messages.
func procValue(name string) string {
	b, err := os.ReadFile("/proc/sys/fs/inotify/" + name)
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}
