package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// Root is an open workspace directory. Created by Open; immutable; safe for
// concurrent use; nothing to close.
type Root struct {
	path string // absolute, cleaned, symlinks evaluated
}

// Open opens the workspace at dir, which must be an absolute path to an
// existing directory. The root is stored with symlinks evaluated, so the same
// directory reached through different links is one workspace.
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
	return &Root{path: real}, nil
}

// Path returns the root's absolute path, symlinks evaluated.
func (r *Root) Path() string { return r.path }

// Resolve maps a model-supplied path to an absolute path inside the root.
// p is relative to the root ("" and "." are the root itself); an absolute p
// is accepted only if it leads inside the root. Symlinks are followed at every
// component, and the result is their final destination, so the caller
// operates on what it checked. Paths that do not exist yet resolve through
// their deepest existing ancestor. Errors are *PathError.
func (r *Root) Resolve(p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", &PathError{Path: p, Msg: "contains a NUL byte; use a plain path relative to the workspace root", Err: fs.ErrInvalid}
	}
	var start, rest string
	abs := filepath.IsAbs(p)
	if abs {
		clean := filepath.Clean(p)
		vol := filepath.VolumeName(clean)
		start, rest = vol+string(filepath.Separator), clean[len(vol):]
	} else {
		rel := filepath.Clean(p)
		if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", &PathError{Path: p, Msg: "is outside the workspace; use a path relative to the workspace root", Err: ErrOutside}
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
		return "", &PathError{Path: p, Msg: fmt.Sprintf("is outside the workspace %s; use a path relative to the workspace root", r.path), Err: ErrOutside}
	case links > 0:
		return "", &PathError{Path: p, Msg: fmt.Sprintf("leads through a symlink to %s, which is outside the workspace; only files inside the workspace can be used", dest), Err: ErrOutside}
	default:
		return "", &PathError{Path: p, Msg: "is outside the workspace; use a path relative to the workspace root", Err: ErrOutside}
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
