package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Landlock before ABI 9 cannot refuse connect(2) to a unix socket with a
// path, and many such sockets run commands for whoever connects: a tmux or
// screen server, an nvim --listen, the D-Bus session bus (systemd-run
// --user), docker's. So every command runs in a mount namespace of its own
// where no path leads to them: /tmp is a private directory of the
// workspace's, $XDG_RUNTIME_DIR is an empty tmpfs, and every other socket
// the machine has bound is covered with /dev/null. The workspace and the
// other directories commands may write stay where they are, as do the
// sockets the user allows (HEARTH_SANDBOX_SOCKETS). The workspace's git
// directory is protected there too (protectGitDir).

// callMounts is what a command's mount namespace hides and protects.
type callMounts struct {
	keep       []string // directories commands may write (workspace, granted caches): stay as they are
	tmp        string   // host directory bound over /tmp (and $TMPDIR if it differs): persistent, so what one command leaves in /tmp the next command of the same workspace sees; "" = empty tmpfs
	tmpdir     string   // the commands' $TMPDIR, when set: private like /tmp
	runtimeDir string   // $XDG_RUNTIME_DIR, covered with an empty tmpfs when set and outside keep
	socket     string   // the daemon's socket: hidden
	allow      []string // unix sockets the user allows by configuration: left reachable
	gitDirs    []string // git directories to protect: configuration and hooks read-only, the directory itself a mount point
	unixTable  string   // the host network namespace's socket table (a /proc/PID/net/unix of a process there); "" = /proc/net/unix
}

// setupCallMounts hides and protects, in the calling process's mount
// namespace, what m says. It must run in a fresh user+mount namespace (it
// needs CAP_SYS_ADMIN there, and changes nothing outside), before
// Landlock, which then forbids the command to unmount or mount anything.
// Any cover that fails fails the whole: a socket left reachable is an
// error, never a silent gap. Afterwards /tmp is the private directory:
// Landlock's write grants must name it there ("/tmp"), and the working
// directory is best entered again by its path, through the mounts.
func setupCallMounts(m callMounts) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	_, _, _, areas := m.areas()
	// The temp dir is among the directories commands may write: it is the
	// private one now.
	keep := slices.DeleteFunc(canonicalAll(m.keep), func(k string) bool { return slices.Contains(areas, k) })
	allow := canonicalAll(m.allow)
	reachable := func(p string) bool { // left at its path on purpose
		return slices.Contains(allow, p) || slices.ContainsFunc(keep, func(k string) bool { return within(p, k) })
	}
	back := m.openBack(keep, allow, areas)
	defer func() {
		for _, b := range back {
			unix.Close(b.fd)
		}
	}()

	// Every other socket the machine has bound.
	socks, err := hostSockets(m.unixTable)
	if err != nil {
		return err
	}
	exempt := m.exempt()
	for _, s := range socks {
		if exempt(s.path) {
			continue
		}
		if err := unix.Mount("/dev/null", s.path, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("cover the socket %s: %w", s.path, err)
		}
	}
	if err := m.coverAreas(back); err != nil {
		return err
	}
	if m.socket != "" {
		if err := hideSocket(m.socket, keep); err != nil {
			return fmt.Errorf("hide the daemon's socket: %w", err)
		}
	}
	for _, g := range m.gitDirs {
		if err := protectGit(g); err != nil {
			return err
		}
	}
	// Fail closed: no socket of the host's is left at its path.
	for _, s := range socks {
		if reachable(s.path) {
			continue
		}
		var st unix.Stat_t
		if err := unix.Lstat(s.path, &st); err == nil && st.Dev == s.dev && st.Ino == s.ino {
			return fmt.Errorf("the socket %s is still reachable", s.path)
		}
	}
	return nil
}

// openBack opens what must stay reachable where an area is covered — the
// outermost writable directories and the allowed sockets inside an area —
// before it is covered, to be bound back (coverAreas). The caller closes
// the descriptors.
func (m callMounts) openBack(keep, allow, areas []string) []placed {
	inArea := func(p string) bool {
		return slices.ContainsFunc(areas, func(a string) bool { return within(p, a) })
	}
	var back []placed
	for _, k := range outermost(keep) {
		if inArea(k) {
			if b, ok := openPlaced(k, true); ok {
				back = append(back, b)
			}
		}
	}
	for _, a := range allow {
		if inArea(a) && !slices.ContainsFunc(keep, func(k string) bool { return within(a, k) }) {
			if b, ok := openPlaced(a, false); ok {
				back = append(back, b)
			}
		}
	}
	return back
}

// coverAreas covers the runtime directory with an empty tmpfs and /tmp
// with the workspace's private directory (an empty tmpfs without one),
// makes $TMPDIR that same directory, and binds back what openBack opened.
func (m callMounts) coverAreas(back []placed) error {
	tmp, tmpdir, runtimeDir, areas := m.areas()
	tmpFd := -1
	if m.tmp != "" {
		fd, err := unix.Open(m.tmp, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open the private /tmp %s: %w", m.tmp, err)
		}
		tmpFd = fd
		defer unix.Close(fd)
	}
	if runtimeDir != "" {
		if err := unix.Mount("hearth-runtime", runtimeDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700,size=1m"); err != nil {
			return fmt.Errorf("cover %s: %w", runtimeDir, err)
		}
	}
	var err error
	if tmpFd >= 0 {
		err = unix.Mount(fdPath(tmpFd), tmp, "", unix.MS_BIND, "")
	} else {
		err = unix.Mount("hearth-tmp", tmp, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777")
	}
	if err != nil {
		return fmt.Errorf("make /tmp private: %w", err)
	}
	if tmpdir != "" {
		fd, err := unix.Open(tmp, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open the private /tmp: %w", err)
		}
		defer unix.Close(fd)
		back = append([]placed{{path: tmpdir, fd: fd, dir: true}}, back...)
	}
	for _, b := range back {
		if err := place(b, areas); err != nil {
			return err
		}
	}
	return nil
}

// placed is a file or directory to put back at path, opened (O_PATH)
// before what covers it was mounted.
type placed struct {
	path string
	fd   int
	dir  bool
}

// openPlaced opens path to be put back; false when it is not there.
func openPlaced(path string, dir bool) (placed, bool) {
	flags := unix.O_PATH | unix.O_CLOEXEC
	if dir {
		flags |= unix.O_DIRECTORY
	}
	fd, err := unix.Open(path, flags, 0)
	if err != nil {
		return placed{}, false
	}
	return placed{path: path, fd: fd, dir: dir}, true
}

func fdPath(fd int) string { return fmt.Sprintf("/proc/self/fd/%d", fd) }

// place binds b back at its path, making the mount point inside the
// covered area it lies in: missing directories are made, and whatever is
// in the way there — a symlink or a file a command left in its /tmp — is
// removed first, so no mount lands where a link points.
func place(b placed, areas []string) error {
	area := b.path // not in a covered directory: it is there already
	for _, a := range areas {
		if within(b.path, a) && a != b.path && (area == b.path || len(a) > len(area)) {
			area = a
		}
	}
	p := area
	rest := strings.TrimPrefix(strings.TrimPrefix(b.path, area), "/")
	parts := strings.Split(rest, "/")
	if rest == "" {
		parts = nil
	}
	for i, name := range parts {
		p = filepath.Join(p, name)
		wantDir := b.dir || i < len(parts)-1
		fi, err := os.Lstat(p)
		if err == nil && (fi.IsDir() == wantDir) && fi.Mode().Type()&fs.ModeSymlink == 0 {
			continue
		}
		if err == nil {
			if err := os.RemoveAll(p); err != nil {
				return fmt.Errorf("put back %s: clear %s: %w", b.path, p, err)
			}
		}
		if wantDir {
			err = unix.Mkdir(p, 0o700)
		} else {
			var fd int
			fd, err = unix.Open(p, unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
			if err == nil {
				unix.Close(fd)
			}
		}
		if err != nil {
			return fmt.Errorf("put back %s: make %s: %w", b.path, p, err)
		}
	}
	if err := unix.Mount(fdPath(b.fd), b.path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("put back %s: %w", b.path, err)
	}
	return nil
}

// hostSocket is a socket file of the host's: its path and identity.
type hostSocket struct {
	path     string
	dev, ino uint64
}

// hostSockets lists the pathname unix sockets bound in the network
// namespace whose table is at table (/proc/net/unix when ""): the socket
// files at their canonical paths in this mount namespace: the others (bound
// in another mount namespace, or removed since) have no path to cover.
// Names without a leading slash (abstract sockets, and the rare socket
// bound by a relative path) are left out: Landlock scopes the abstract
// ones.
func hostSockets(table string) ([]hostSocket, error) {
	if table == "" {
		table = "/proc/net/unix"
	}
	f, err := os.Open(table)
	if err != nil {
		return nil, fmt.Errorf("list the machine's unix sockets: %w", err)
	}
	defer f.Close()
	return readHostSockets(f, nil)
}

// readHostSockets parses a socket table (/proc/net/unix's format). When
// seen is not nil, only rows it does not hold (path and socket inode) are
// looked at, and they are added to it: a cell re-reads the table before
// each call and stats only what was bound since.
func readHostSockets(f io.Reader, seen map[string]string) ([]hostSocket, error) {
	var out []hostSocket
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 || !strings.HasPrefix(fields[7], "/") {
			continue
		}
		if seen != nil {
			path := strings.Join(fields[7:], " ")
			if seen[path] == fields[6] {
				continue
			}
			seen[path] = fields[6]
		}
		p := canonical(strings.Join(fields[7:], " "))
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
			continue
		}
		if !slices.ContainsFunc(out, func(s hostSocket) bool { return s.path == p }) {
			out = append(out, hostSocket{p, uint64(st.Dev), st.Ino})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("list the machine's unix sockets: %w", err)
	}
	return out, nil
}

// canonicalAll is canonical of each path.
func canonicalAll(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		out = append(out, canonical(p))
	}
	return out
}

// outermost drops the paths that lie inside another of paths: putting back
// the outer one puts them back too.
func outermost(paths []string) []string {
	var out []string
	for i, p := range paths {
		inner := false
		for j, q := range paths {
			if i != j && within(p, q) && (p != q || j < i) {
				inner = true
				break
			}
		}
		if !inner {
			out = append(out, p)
		}
	}
	return out
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// statfsMountFlags are the mount flags a remount in a user namespace must
// keep (the kernel locks them), by their statfs flag.
var statfsMountFlags = map[int64]uintptr{
	unix.ST_NOSUID:      unix.MS_NOSUID,
	unix.ST_NODEV:       unix.MS_NODEV,
	unix.ST_NOEXEC:      unix.MS_NOEXEC,
	unix.ST_NOATIME:     unix.MS_NOATIME,
	unix.ST_NODIRATIME:  unix.MS_NODIRATIME,
	unix.ST_RELATIME:    unix.MS_RELATIME,
	unix.ST_SYNCHRONOUS: unix.MS_SYNCHRONOUS,
}

// bindReadOnly makes p a read-only mount of itself: writes fail with EROFS,
// and renaming or removing it with EBUSY.
func bindReadOnly(p string) error {
	if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", p, err)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return fmt.Errorf("statfs %s: %w", p, err)
	}
	flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_RDONLY)
	for sf, ms := range statfsMountFlags {
		if st.Flags&sf != 0 {
			flags |= ms
		}
	}
	if err := unix.Mount("", p, "", flags, ""); err != nil {
		return fmt.Errorf("make %s read-only: %w", p, err)
	}
	return nil
}

// protectGit keeps the git directory dir the user's: its configuration
// (where core.fsmonitor, core.hooksPath or a filter names a program git
// runs) and its hooks would otherwise let a command plant what the user's
// own next git command runs outside the sandbox. The directory is bound
// onto itself, so it can be neither moved nor removed, and config,
// config.worktree, hooks/, info/ and a worktree's commondir (which names
// the directory holding the configuration) are read-only — those of its
// submodules (modules/*/) and worktrees (worktrees/*/) too. Objects, refs
// and the index stay writable: commands commit as before. A missing hooks/
// is made first, so that no hook can be added there. A .git file (a
// worktree's or a submodule's "gitdir: X") is made read-only itself.
func protectGit(dir string) error {
	dir = canonical(dir)
	if fi, err := os.Stat(dir); err != nil {
		return nil
	} else if fi.Mode().IsRegular() {
		// A .git file: "gitdir: X".
		if err := bindReadOnly(dir); err != nil {
			return fmt.Errorf("protect %s: %w", dir, err)
		}
		return nil
	} else if !fi.IsDir() {
		return nil
	}
	if err := unix.Mount(dir, dir, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("protect %s: %w", dir, err)
	}
	// A worktree's git directory (it has a commondir) uses the common
	// directory's hooks.
	_, err := os.Lstat(filepath.Join(dir, "commondir"))
	return protectGitDir(dir, err != nil, 0)
}

// protectGitDir makes dir's configuration and hooks read-only, and those
// of the git directories under modules/ and worktrees/ (nested submodules
// to a depth of 8).
func protectGitDir(dir string, hooks bool, depth int) error {
	if hooks {
		if err := os.Mkdir(filepath.Join(dir, "hooks"), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("protect %s: make hooks: %w", dir, err)
		}
	}
	for _, name := range []string{"config", "config.worktree", "hooks", "info", "commondir"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Lstat(p); err != nil || fi.Mode().Type()&fs.ModeSymlink != 0 {
			continue
		}
		if err := bindReadOnly(p); err != nil {
			return fmt.Errorf("protect %s: %w", dir, err)
		}
	}
	if depth >= 8 {
		return nil
	}
	for _, sub := range []string{"modules", "worktrees"} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			// A submodule's own git directory has hooks; a worktree's uses
			// the common directory's.
			if err := protectGitDir(filepath.Join(dir, sub, e.Name()), sub == "modules", depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// areas are the directories a command's namespace covers wholesale: /tmp,
// $TMPDIR when it is another directory, and the runtime directory unless
// it lies in one of those; each "" when not covered.
func (m callMounts) areas() (tmp, tmpdir, runtimeDir string, areas []string) {
	tmp = canonical("/tmp")
	areas = []string{tmp} // covered wholesale
	if m.tmpdir != "" {
		if tmpdir = canonical(m.tmpdir); tmpdir != tmp && isDir(tmpdir) {
			areas = append(areas, tmpdir)
		} else {
			tmpdir = ""
		}
	}
	inArea := func(p string) bool {
		return slices.ContainsFunc(areas, func(a string) bool { return within(p, a) })
	}
	// A runtime dir in /tmp (where no login manager made one) is hidden
	// with it already.
	if m.runtimeDir != "" {
		if runtimeDir = canonical(m.runtimeDir); runtimeDir != "/" && isDir(runtimeDir) && !inArea(runtimeDir) {
			areas = append(areas, runtimeDir)
		} else {
			runtimeDir = ""
		}
	}
	return tmp, tmpdir, runtimeDir, areas
}

// exempt reports whether a socket at path stays as it is in a command's
// namespace: it lies in a covered area (hidden with it, or the command's
// own), in a directory commands may write, or the user allows it.
func (m callMounts) exempt() func(string) bool {
	_, _, _, areas := m.areas()
	keep, allow := canonicalAll(m.keep), canonicalAll(m.allow)
	return func(p string) bool {
		in := func(d string) bool { return within(p, d) }
		return slices.ContainsFunc(areas, in) || slices.ContainsFunc(keep, in) || slices.Contains(allow, p)
	}
}
