package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hearthd/hearth/workspace/watch"
)

// ErrOutside is wrapped by the *PathError Resolve returns for a path whose
// destination is outside the workspace root.
var ErrOutside = errors.New("outside the workspace")

// PathError reports a model-supplied path that cannot be used. Its message
// names the path and says what to do instead, so it can go back to the model
// verbatim. Created by Resolve; a plain value, nothing to release.
type PathError struct {
	Path string // as supplied by the model
	Msg  string // what is wrong and what to do, read after `path "x" `
	Err  error  // ErrOutside, or the underlying cause
}

func (e *PathError) Error() string { return fmt.Sprintf("path %q %s", e.Path, e.Msg) }

func (e *PathError) Unwrap() error { return e.Err }

// maxSymlinks bounds how many symlinks one Resolve follows, so a link cycle
// ends in an error instead of a loop (Linux uses 40; be generous).
const maxSymlinks = 255

// Root is an open workspace directory. Created by Open, it holds an open
// handle on the directory (an *os.Root) until Close: every file the tools
// read, write or list is opened through that handle, which the kernel keeps
// beneath the directory whatever is renamed or swapped for a symlink
// meanwhile. If the directory is removed and a new one created at the same
// path, the next use opens a handle on the new one (as a path would lead
// there); the old handle is kept until Close, since a call may still be
// using it. A Root that is never closed releases its handles when it is
// garbage collected. Safe for concurrent use.
type Root struct {
	path string // absolute, cleaned, symlinks evaluated

	cur atomic.Pointer[rootHandle] // the handle on the directory now at path

	mu      sync.Mutex // guards retired and the replacement of cur
	retired []*os.Root // handles on directories no longer at path; closed by Close
	closed  bool       // Close was called; no handle is opened again
}

// rootHandle is one handle on the root directory and what it was opened
// on, to tell when path names another directory. Immutable.
type rootHandle struct {
	h  *os.Root
	fi fs.FileInfo
}

// Open opens the workspace at dir, which must be an absolute path to an
// existing directory. The root is stored with symlinks evaluated, so the same
// directory reached through different links is one workspace. The caller
// owns the Root and closes it when the workspace is no longer used.
func Open(dir string) (*Root, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("workspace: open %q: path must be absolute", dir)
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(dir))
	if err != nil {
		return nil, fmt.Errorf("workspace: open %s: %w", dir, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("workspace: open %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace: open %s: not a directory", dir)
	}
	rh, err := openHandle(real)
	if err != nil {
		return nil, fmt.Errorf("workspace: open %s: %w", dir, err)
	}
	r := &Root{path: real}
	r.cur.Store(rh)
	return r, nil
}

func openHandle(path string) (*rootHandle, error) {
	h, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	fi, err := h.Stat(".")
	if err != nil {
		h.Close()
		return nil, err
	}
	return &rootHandle{h: h, fi: fi}, nil
}

// handle returns the handle on the root directory. When the root's path
// names a directory other than the one the handle is on (the workspace was
// removed and created again), it opens a handle on that one first. A path
// that is gone or not a directory keeps the old handle: operations on a
// removed directory fail by themselves.
func (r *Root) handle() *os.Root {
	rh := r.cur.Load()
	fi, err := os.Lstat(r.path)
	if err != nil || !fi.IsDir() || os.SameFile(fi, rh.fi) {
		return rh.h
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return rh.h // fails: closed
	}
	if now := r.cur.Load(); now != rh {
		return now.h // another call replaced it meanwhile
	}
	next, err := openHandle(r.path)
	if err != nil {
		return rh.h
	}
	r.retired = append(r.retired, rh.h)
	r.cur.Store(next)
	return next.h
}

// Close releases the root's directory handles. Tool calls made after it
// fail ("file already closed"); Path, Rel and Resolve still work. Closing
// twice is harmless.
func (r *Root) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	var errs []error
	for _, h := range append(r.retired, r.cur.Load().h) {
		if err := h.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
			errs = append(errs, err)
		}
	}
	r.retired = nil
	return errors.Join(errs...)
}

// Path returns the root's absolute path, symlinks evaluated.
func (r *Root) Path() string { return r.path }

// Resolve maps a model-supplied path to an absolute path inside the root.
// p is relative to the root ("" and "." are the root itself); an absolute p
// is accepted only if it leads inside the root. Symlinks are followed at every
// component, and the result is their final destination, so the caller
// operates on what it checked. Paths that do not exist yet resolve through
// their deepest existing ancestor. Errors are *PathError.
//
// Resolve checks a path and names it; it does not pin it. The tools open
// what it returns through the root's handle (resolveName, then the handle's
// Open, OpenFile, Rename...), which re-walks the name beneath the root in
// the kernel: if a directory on the way was swapped for a symlink leading
// out after Resolve looked, that use fails instead of leaving the root. An
// absolute path from Resolve, opened by name, has no such guarantee: use it
// only where a path is all that is needed (the shell's working directory).
func (r *Root) Resolve(p string) (string, error) { return r.resolveIn("", p) }

// resolveIn is Resolve for a relative p taken from dir, a directory below
// the root named relative to it (OS separators; "" is the root): the
// working directory of a session opened there. p may lead above dir, as
// long as it stays inside the root.
func (r *Root) resolveIn(dir, p string) (string, error) {
	hint := "use a path relative to the workspace root"
	if dir != "" {
		hint = "use a path relative to the working directory, inside the workspace " + r.path
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", &PathError{Path: p, Msg: "contains a NUL byte; " + strings.Replace(hint, "a path", "a plain path", 1), Err: fs.ErrInvalid}
	}
	var start, rest string
	abs := filepath.IsAbs(p)
	if abs {
		clean := filepath.Clean(p)
		vol := filepath.VolumeName(clean)
		start, rest = vol+string(filepath.Separator), clean[len(vol):]
	} else {
		rel := filepath.Clean(filepath.Join(dir, p))
		if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", &PathError{Path: p, Msg: "is outside the workspace; " + hint, Err: ErrOutside}
		}
		start, rest = r.path, rel
	}
	dest, links, err := walkPath(start, rest)
	if err != nil {
		return "", &PathError{Path: p, Msg: fmt.Sprintf("cannot be resolved (%v); use a different path", err), Err: err}
	}
	if r.contains(dest) {
		return dest, nil
	}
	switch {
	case abs && !r.contains(filepath.Clean(p)):
		return "", &PathError{Path: p, Msg: fmt.Sprintf("is outside the workspace %s; %s", r.path, hint), Err: ErrOutside}
	case links > 0:
		return "", &PathError{Path: p, Msg: fmt.Sprintf("leads through a symlink to %s, which is outside the workspace; only files inside the workspace can be used", dest), Err: ErrOutside}
	default:
		return "", &PathError{Path: p, Msg: "is outside the workspace; " + hint, Err: ErrOutside}
	}
}

// walkPath resolves rest, a path relative to dest (an absolute path with no
// symlinks), the way the kernel would: component by component, following
// symlinks and applying ".." to the physical parent. Once a component does
// not exist nothing below it can be a symlink, so the remainder is joined
// lexically; that is what lets not-yet-created paths resolve. It returns the
// destination and how many symlinks were followed.
func walkPath(dest, rest string) (string, int, error) {
	const sep = string(filepath.Separator)
	links := 0
	for rest != "" {
		var comp string
		comp, rest, _ = strings.Cut(rest, sep)
		switch comp {
		case "", ".":
			continue
		case "..":
			dest = filepath.Dir(dest)
			continue
		}
		next := filepath.Join(dest, comp)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return filepath.Join(next, rest), links, nil
			}
			return "", links, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			dest = next
			continue
		}
		links++
		if links > maxSymlinks {
			return "", links, errors.New("too many levels of symbolic links")
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", links, err
		}
		if filepath.IsAbs(target) {
			vol := filepath.VolumeName(target)
			dest, target = vol+sep, target[len(vol):]
		}
		if rest == "" {
			rest = target
		} else {
			rest = target + sep + rest
		}
	}
	return dest, links, nil
}

// contains reports whether the absolute, clean path p is the root or lies
// below it.
func (r *Root) contains(p string) bool {
	if p == r.path {
		return true
	}
	prefix := r.path
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	return strings.HasPrefix(p, prefix)
}

// Rel returns abs relative to the root, slash-separated, for display: "." for
// the root itself. A path outside the root (which Resolve never returns) is
// shown as it is.
func (r *Root) Rel(abs string) string {
	rel, err := filepath.Rel(r.path, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(rel)
}

// resolveName is Resolve plus the name the root's handle knows the
// destination by: relative to the root, with the OS's separators, "." for
// the root itself.
func (r *Root) resolveName(p string) (abs, name string, err error) {
	return r.resolveNameIn("", p)
}

// resolveNameIn is resolveName for a relative p taken from dir (resolveIn).
func (r *Root) resolveNameIn(dir, p string) (abs, name string, err error) {
	abs, err = r.resolveIn(dir, p)
	if err != nil {
		return "", "", err
	}
	return abs, r.name(abs), nil
}

// name is abs, a path inside the root, as the handle's name for it.
func (r *Root) name(abs string) string {
	rel, err := filepath.Rel(r.path, abs)
	if err != nil {
		return abs // Resolve never returns such a path; the handle refuses it
	}
	return rel
}

// errNotRegular is wrapped by OpenRegular's error for something that is not
// a regular file.
var errNotRegular = errors.New("not a regular file")

// OpenRegular opens name (as resolveName gives it) for reading through the
// root's handle. The open never blocks on a FIFO, and the file is returned
// only if what was opened is a regular file; otherwise the error wraps
// errNotRegular and fi describes what it is. The caller closes the file.
func (r *Root) OpenRegular(name string) (f *os.File, fi fs.FileInfo, err error) {
	f, err = r.handle().OpenFile(name, os.O_RDONLY|watch.OpenNonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	if fi, err = f.Stat(); err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fi, &fs.PathError{Op: "open", Path: name, Err: errNotRegular}
	}
	return f, fi, nil
}

// ReadFile reads the regular file at p, a path as the model gives it
// (checked as Resolve checks it), through the root's handle: what it returns
// is a file beneath the root even while the path is being changed. Errors
// are a *PathError for a path refused, else the open's or the read's.
func (r *Root) ReadFile(p string) ([]byte, error) {
	_, name, err := r.resolveName(p)
	if err != nil {
		return nil, err
	}
	f, _, err := r.OpenRegular(name)
	if err != nil {
		if escaped(err) {
			return nil, movedOut(p)
		}
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// ReadFileHead is ReadFile for at most max bytes of the file: its first
// max bytes (all of it when smaller) and its size.
func (r *Root) ReadFileHead(p string, max int) (head []byte, size int64, err error) {
	_, name, err := r.resolveName(p)
	if err != nil {
		return nil, 0, err
	}
	f, fi, err := r.OpenRegular(name)
	if err != nil {
		if escaped(err) {
			return nil, 0, movedOut(p)
		}
		return nil, 0, err
	}
	defer f.Close()
	head, err = io.ReadAll(io.LimitReader(f, int64(max)))
	return head, fi.Size(), err
}

// escapeMsg is the message of the error os.Root returns for a name that
// leads out of it; the error value itself is not exported.
const escapeMsg = "path escapes from parent"

// escaped reports whether err is the root's handle refusing a name because
// it leads out of the root: something on the path changed between Resolve
// and the use (Resolve refuses every path that leads out when it looks).
func escaped(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if err.Error() == escapeMsg {
			return true
		}
	}
	return false
}

// movedOut is the error for p when Resolve accepted it but the handle
// refused it.
func movedOut(p string) *PathError {
	return &PathError{Path: p, Msg: "now leads outside the workspace: it changed while hearth was using it; only files inside the workspace can be used", Err: ErrOutside}
}

// useFailed is the model's message when using rel through the handle failed
// with err: the path now leads out, or "cannot verb rel: cause".
func useFailed(verb, rel string, err error) string {
	if escaped(err) {
		return movedOut(rel).Error()
	}
	return fmt.Sprintf("cannot %s %q: %v", verb, rel, unwrapPathErr(err))
}

// openDir opens the directory name beneath root as a root of its own, for
// work that must stay in that one directory. It opens "name/.", so name is
// opened as a directory: anything else swapped in for it (a FIFO) fails at
// once instead of blocking the open.
func openDir(root *os.Root, name string) (*os.Root, error) {
	return root.OpenRoot(name + string(filepath.Separator) + ".")
}
