package workspace

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// maxEditSize is the largest existing file write_file and edit_file will
// replace: the whole file is held in memory, diffed and shown to the user.
const maxEditSize = 8 << 20

// fileChange is what one write_file or edit_file call does to one file,
// computed without touching it, so Preview and Run share every check. It
// lives for one Preview or Run.
type fileChange struct {
	name    string      // the destination as the root's handle names it (symlinks evaluated by Resolve)
	abs     string      // the destination as an absolute path, for the editor
	rel     string      // the destination relative to the root, slash-separated (Locations, diffs, OnWrite)
	shown   string      // the destination as the model names it: relative to the working directory
	editor  bool        // the file exists and the call's editor takes the write: old is its text
	existed bool        // the file exists now; false means it will be created
	mode    fs.FileMode // the existing file's permission bits, kept by the write
	old     string      // the current content ("" for a new file)
	new     string      // the content after the call
}

// fileWriter plans and commits the file changes of one call of write_file,
// edit_file or apply_patch: each target resolved from the call's place and
// refused inside a git directory, read from and written to the call's
// editor when it has one (atomically on disk otherwise), and reported to
// onWrite (Toolset.OnWrite) before it is written. A plain value made by
// Toolset.files for one call.
type fileWriter struct {
	at      place
	ed      Editor
	onWrite func(rel string, content []byte)
	before  func(ctx context.Context, c Change) error // Toolset.before
}

// loadTarget resolves the model's path for a write and reads what is there
// now, through the root's handle. tool names the caller in messages. A
// non-empty msg says why the path cannot be written, for the model.
func (fw fileWriter) loadTarget(ctx context.Context, tool, path string) (c *fileChange, msg string) {
	abs, name, err := fw.at.resolveName(path)
	if err != nil {
		return nil, err.Error()
	}
	rel := fw.at.root.Rel(abs)
	c = &fileChange{name: name, abs: abs, rel: rel, shown: fw.at.show(rel)}
	if abs == fw.at.root.Path() {
		return c, fmt.Sprintf("path %q is the workspace root directory; give the path of a file", path)
	}
	if msg := fw.gitWriteRefused(path, abs, c.shown); msg != "" {
		return c, msg // gitguard.go
	}
	fi, err := fw.at.root.handle().Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.editor = fw.ed.Writer != nil && fw.ed.Creates // a new file: created by the editor, or on disk
		return c, ""
	case errors.Is(err, syscall.ENOTDIR):
		return c, fmt.Sprintf("cannot %s %q: part of the path is a file, not a directory", verbOf(tool), c.shown)
	case err != nil:
		return c, useFailed(verbOf(tool), c.shown, err)
	case fi.IsDir():
		return c, fmt.Sprintf("%q is a directory, not a file; give the path of a file", c.shown)
	case !fi.Mode().IsRegular():
		return c, fmt.Sprintf("%q is not a regular file (%v); only regular files can be written", c.shown, fi.Mode().Type())
	case fi.Size() > maxEditSize:
		return c, fmt.Sprintf("%q is %d bytes, over the %d MiB limit of %s; use shell to change files this large", c.shown, fi.Size(), maxEditSize>>20, tool)
	}
	f, fi, err := fw.at.root.OpenRegular(name)
	if err != nil {
		return c, useFailed("read", c.shown, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(ctxReader{ctx, f}, maxEditSize+1))
	switch {
	case ctx.Err() != nil:
		return c, cancelledResult(tool).Output
	case err != nil:
		return c, useFailed("read", c.shown, err)
	case len(b) > maxEditSize:
		return c, fmt.Sprintf("%q grew past %d MiB while being read; use shell to change files this large", c.shown, maxEditSize>>20)
	}
	c.existed, c.mode, c.old = true, fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky), string(b)
	if fw.ed.Writer != nil {
		return fw.loadFromEditor(ctx, tool, c)
	}
	return c, ""
}

// loadFromEditor completes loadTarget for a file that exists when the
// editor takes the write: the text to change is the editor's, what the user
// sees (the disk's, read already, when the editor offers no reads). An
// editor that cannot give its text fails the call: changing the disk's text
// in the buffer would throw the user's unsaved changes away.
func (fw fileWriter) loadFromEditor(ctx context.Context, tool string, c *fileChange) (*fileChange, string) {
	c.editor = true
	if fw.ed.Reader == nil {
		return c, ""
	}
	text, err := fw.ed.Reader.ReadText(ctx, c.abs)
	switch {
	case ctx.Err() != nil:
		return c, cancelledResult(tool).Output
	case err != nil:
		return c, fmt.Sprintf("cannot %s %q: the editor could not give its copy of the file (%v); nothing was changed. Try again, or tell the user", verbOf(tool), c.shown, err)
	case len(text) > maxEditSize:
		return c, fmt.Sprintf("%q is %d bytes in the editor, over the %d MiB limit of %s; use shell to change files this large", c.shown, len(text), maxEditSize>>20, tool)
	}
	c.old = text
	return c, ""
}

func verbOf(tool string) string {
	if tool == "edit_file" {
		return "edit"
	}
	return "write"
}

// diff describes the change for the editor.
func (c *fileChange) diff() *FileDiff {
	return &FileDiff{Path: c.rel, Old: c.old, New: c.new, Unified: unifiedDiff(c.rel, c.old, c.new, c.existed), Buffer: c.editor}
}

// commit writes the new content atomically: the file is either what it was
// or entirely the new content, never a mix, whatever happens to hearth in
// between. Missing parent directories are created first. Everything goes
// through the root's handle, so a directory swapped for a symlink leading
// out since loadTarget looked makes the write fail instead of escaping.
// A change the editor takes goes to its buffer instead, and the disk is left
// alone.
func (fw fileWriter) commit(ctx context.Context, c *fileChange) error {
	if c.editor {
		if err := fw.ed.Writer.WriteText(ctx, c.abs, c.new); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("the write to %q through the editor was cancelled; read the file before trying again", c.shown)
			}
			if errors.Is(err, ErrEditorRefused) {
				return fmt.Errorf("the user's editor refused to write %q (%v): the change was not made; do not try it again, tell the user what you meant to change", c.shown, err)
			}
			return fmt.Errorf("the editor could not apply the write to %q (%v); read the file to see what it holds, then try again or tell the user", c.shown, err)
		}
		return nil
	}
	if err := fw.recheckGit(c); err != nil {
		return err
	}
	if dir := filepath.Dir(c.name); !c.existed && dir != "." {
		if err := fw.at.root.handle().MkdirAll(dir, 0o777); err != nil {
			if escaped(err) {
				return movedOut(c.shown)
			}
			return fmt.Errorf("cannot create the directory for %q: %v", c.shown, unwrapPathErr(err))
		}
	}
	if err := writeAtomic(fw.at.root.handle(), c.name, []byte(c.new), c.mode, c.existed); err != nil {
		return errors.New(useFailed("write", c.shown, err))
	}
	return nil
}

// tempPrefix and tempSuffix bracket the names of the temporary files
// writeAtomic creates next to their destination. A watcher can ignore them.
const (
	tempPrefix = ".hearth-"
	tempSuffix = ".tmp"
)

// writeAtomic replaces name, beneath root, with data through a temporary
// file in the same directory and a rename. The directory is opened once, and
// the temporary file is created, renamed and (on failure) removed through
// that one handle, so all three happen in the same directory whatever is
// renamed meanwhile, and nothing is left behind. keepMode gives the new file
// mode (an existing file's bits); otherwise it is created 0666 less the
// umask, like any new file.
func writeAtomic(root *os.Root, name string, data []byte, mode fs.FileMode, keepMode bool) (err error) {
	dir, err := openDir(root, filepath.Dir(name))
	if err != nil {
		return err
	}
	defer dir.Close()
	f, tmp, err := createTemp(dir)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			dir.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if keepMode {
		if err := f.Chmod(mode); err != nil {
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return dir.Rename(tmp, filepath.Base(name))
}

// createTemp creates a new, empty temporary file directly in dir with mode
// 0666 less the umask (os.CreateTemp would make it 0600), and returns it
// with its name in dir.
func createTemp(dir *os.Root) (*os.File, string, error) {
	for range 100 {
		var rnd [8]byte
		rand.Read(rnd[:])
		name := tempPrefix + hex.EncodeToString(rnd[:]) + tempSuffix
		f, err := dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", errors.New("cannot create a temporary file")
}

// contentHash is the sha256 hex of content, as read_file reports it.
func contentHash(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}
